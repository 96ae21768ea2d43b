"""`model.save(dirpath, zipped=False)`: Keras 3.15's unzipped layout (a directory holding
config.json, metadata.json and model.weights.h5), written atomically, loaded with the same
bounded, allow-listed reading as the zip, and exchanged with real Keras both ways."""

import os

import numpy as np
import pytest

import fkeras
from fkeras import layers

pytest.importorskip("h5py")
X = np.random.default_rng(0).standard_normal((5, 4)).astype("float32")


def _model():
    inp = fkeras.Input((4,))
    model = fkeras.Model(inp, layers.Dense(2, activation="relu")(layers.Dense(3)(inp)))
    model.compile("adam", "mse")
    model.fit(X, np.ones((5, 2), np.float32), epochs=1, verbose=0)
    return model


def test_round_trip_with_compile_state(tmp_path):
    model = _model()
    path = tmp_path / "saved_model"
    model.save(path, zipped=False)
    assert sorted(os.listdir(path)) == ["config.json", "metadata.json", "model.weights.h5"]
    loaded = fkeras.models.load_model(path)
    np.testing.assert_array_equal(loaded.predict(X, verbose=0), model.predict(X, verbose=0))
    assert loaded.optimizer is not None and int(loaded.optimizer.iterations) == 1


def test_overwrite_replaces_the_directory_and_leaves_no_temporaries(tmp_path):
    path = tmp_path / "m"
    _model().save(path, zipped=False)
    model = _model()
    model.save(path, zipped=False)
    np.testing.assert_array_equal(fkeras.models.load_model(path).predict(X, verbose=0),
                                  model.predict(X, verbose=0))
    assert sorted(os.listdir(tmp_path)) == ["m"]
    with pytest.raises(ValueError, match="overwrite=False"):
        model.save(path, zipped=False, overwrite=False)


def test_keras_rules_on_the_path(tmp_path):
    with pytest.raises(ValueError, match="should not end in `.keras`"):
        _model().save(tmp_path / "m.keras", zipped=False)


def test_hostile_directory_is_refused_before_reading(tmp_path):
    path = tmp_path / "m"
    _model().save(path, zipped=False)
    with open(path / "config.json", "wb") as f:
        f.write(b"{" * 10 + b" " * (9 * 2**20))  # 9 MiB: over the config cap
    with pytest.raises(ValueError, match="config.json"):
        fkeras.models.load_model(path)


def test_exchanged_with_keras(tmp_path):
    if "KERAS_BACKEND" not in os.environ:
        os.environ["KERAS_BACKEND"] = "torch"
    keras = pytest.importorskip("keras")
    model = _model()
    model.save(tmp_path / "ours", zipped=False)
    theirs = keras.models.load_model(tmp_path / "ours", compile=False)
    np.testing.assert_allclose(np.asarray(theirs.predict(X, verbose=0)),
                               model.predict(X, verbose=0), rtol=1e-5, atol=1e-6)
    theirs.save(tmp_path / "theirs", zipped=False)
    back = fkeras.models.load_model(tmp_path / "theirs", compile=False)
    np.testing.assert_allclose(back.predict(X, verbose=0), model.predict(X, verbose=0),
                               rtol=1e-5, atol=1e-6)
