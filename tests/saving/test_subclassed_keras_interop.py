"""Subclassed-model `.keras` files between fkeras and real Keras 3 (torch backend), both
ways: the same classes (tests/saving/subclassed_models.py) registered in both, trained with
Adam in one, loaded in the other: equal predictions, weights and optimizer state."""

import io
import zipfile

import numpy as np
import pytest

keras = pytest.importorskip("keras")
h5py = pytest.importorskip("h5py")

import fkeras  # noqa: E402
import subclassed_models  # noqa: E402

PACKAGE = "FkSubclassInterop"
F = subclassed_models.define(fkeras, PACKAGE)
K = subclassed_models.define(keras, PACKAGE)
X = np.random.default_rng(0).standard_normal((8, 3)).astype("float32")
Y = np.random.default_rng(1).standard_normal((8, 1)).astype("float32")

# Keras 3.15 records a Model subclass's *default* constructor values (its Model.__new__
# drops the arguments), so the Keras-written cases use the defaults.
CASES = {"nested": ("Nested", {}, 1), "appended": ("Appended", {}, 1),
         "model_inside_model": ("Outer", {}, 1), "own_build": ("OwnBuild", {}, 3),
         "serialized_layer_arguments": ("Composed", {"first_layer": "relu6"}, 2)}


def _fit(module, classes, name):
    cls_name, kwargs, width = CASES[name]
    if kwargs.get("first_layer") == "relu6":
        kwargs = {"first_layer": module.layers.Dense(6, activation="relu6")}
    model = classes[cls_name](**kwargs)
    model.compile(optimizer=module.optimizers.Adam(0.01), loss="mse")
    model.fit(X, np.repeat(Y, width, axis=1), batch_size=4, epochs=2, verbose=0)
    return model


def _np(v):
    value = v.value if hasattr(v, "value") else v
    return np.asarray(value.detach().cpu() if hasattr(value, "detach") else value)


def _datasets(path):
    out = {}
    with h5py.File(io.BytesIO(zipfile.ZipFile(path).read("model.weights.h5")), "r") as f:
        f.visititems(lambda n, o: out.__setitem__(n, o.shape)
                     if isinstance(o, h5py.Dataset) else None)
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_keras_file_loads_in_fkeras(name, tmp_path):
    model = _fit(keras, K, name)
    model.save(tmp_path / "k.keras")
    restored = fkeras.saving.load_model(tmp_path / "k.keras")
    assert type(restored).__name__ == CASES[name][0]
    np.testing.assert_allclose(restored.predict(X, verbose=0), model.predict(X, verbose=0),
                               rtol=1e-5, atol=1e-5)
    assert int(np.asarray(restored.optimizer.iterations)) == 4
    for k_var, f_var in zip(model.optimizer.variables, restored.optimizer.variables):
        np.testing.assert_allclose(np.asarray(f_var), _np(k_var), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", sorted(CASES))
def test_fkeras_file_loads_in_keras(name, tmp_path):
    model = _fit(fkeras, F, name)
    model.save(tmp_path / "f.keras")
    restored = keras.saving.load_model(tmp_path / "f.keras")
    assert type(restored).__name__ == CASES[name][0]
    np.testing.assert_allclose(restored.predict(X, verbose=0), model.predict(X, verbose=0),
                               rtol=1e-5, atol=1e-5)
    assert int(_np(restored.optimizer.iterations)) == 4
    for f_var, k_var in zip(model.optimizer.variables, restored.optimizer.variables):
        np.testing.assert_allclose(_np(k_var), np.asarray(f_var), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", sorted(CASES))
def test_both_write_the_same_weight_layout(name, tmp_path):
    _fit(keras, K, name).save(tmp_path / "k.keras")
    _fit(fkeras, F, name).save(tmp_path / "f.keras")
    k_keys, f_keys = _datasets(tmp_path / "k.keras"), _datasets(tmp_path / "f.keras")
    # fkeras also writes an empty group for a Sequential's InputLayer: datasets only here
    assert f_keys == k_keys


def test_constructor_arguments_reach_keras(tmp_path):
    """fkeras writes the arguments actually passed (Keras 3.15 would write the defaults,
    units=4, depth=2, and then fail to load its own weights): Keras rebuilds the same model."""
    model = F["Appended"](units=5, depth=3)
    model(X)
    model.save(tmp_path / "f.keras")
    restored = keras.saving.load_model(tmp_path / "f.keras")
    assert len(restored.blocks) == 3 and restored.blocks[0].units == 5
    np.testing.assert_allclose(restored.predict(X, verbose=0), model.predict(X, verbose=0),
                               rtol=1e-5, atol=1e-5)
