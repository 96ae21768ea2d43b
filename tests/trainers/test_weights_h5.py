"""save_weights / load_weights: Keras 3's `.weights.h5` layout, round trips, optimizer state,
mismatches, and files written the way Keras 3 writes them."""

import numpy as np
import pytest

import fkeras
from fkeras import layers

h5py = pytest.importorskip("h5py")


def cnn():
    inp = fkeras.Input((8, 8, 1), name="img")
    h = layers.Conv2D(4, 3, activation="relu", name="c1")(inp)
    h = layers.BatchNormalization(name="bn")(h)
    h = layers.Flatten()(h)
    h = layers.Dense(6, activation="relu", name="d1")(h)
    return fkeras.Model(inp, layers.Dense(3, activation="softmax", name="d2")(h))


def test_layout_is_keras3(tmp_path):
    model = cnn()
    path = tmp_path / "m.weights.h5"
    model.save_weights(path)
    with h5py.File(path, "r") as f:
        assert f["vars"].attrs["name"] == model.name
        assert f["layers/conv2d/vars"].attrs["name"] == "c1"
        assert [f[f"layers/conv2d/vars/{i}"].shape for i in range(2)] == [(3, 3, 1, 4), (4,)]
        assert len(f["layers/batch_normalization/vars"]) == 4
        assert f["layers/dense/vars"].attrs["name"] == "d1"
        assert f["layers/dense_1/vars/0"].shape == (6, 3)
        np.testing.assert_array_equal(f["layers/dense_1/vars/0"][()],
                                      model.get_layer("d2").kernel.numpy())
        assert "optimizer" not in f


def test_round_trip_with_optimizer_state(tmp_path):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((16, 8, 8, 1)).astype("float32"), rng.integers(0, 3, 16)
    model = cnn()
    model.compile("adam", "sparse_categorical_crossentropy")
    model.fit(x, y, epochs=1, verbose=0)
    path = tmp_path / "m.weights.h5"
    model.save_weights(path)
    other = cnn()
    other.compile("adam", "sparse_categorical_crossentropy")
    other.fit(x[:4], y[:4], epochs=1, verbose=0)  # builds the optimizer
    other.load_weights(path)
    for a, b in zip(model.get_weights(), other.get_weights()):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(model.optimizer.variables, other.optimizer.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_allclose(model.predict(x, verbose=0), other.predict(x, verbose=0))


def test_errors(tmp_path):
    model = cnn()
    with pytest.raises(ValueError, match="must end in `.weights.h5`"):
        model.save_weights(tmp_path / "w.h5")
    path = tmp_path / "m.weights.h5"
    model.save_weights(path)
    inp = fkeras.Input((8, 8, 1))
    h = layers.Flatten()(layers.BatchNormalization()(layers.Conv2D(5, 3)(inp)))
    wrong = fkeras.Model(inp, layers.Dense(3)(layers.Dense(6)(h)))
    before = wrong.get_weights()
    with pytest.raises(ValueError, match="shape of the target variable"):
        wrong.load_weights(path)
    for a, b in zip(before, wrong.get_weights()):  # nothing half-loaded
        np.testing.assert_array_equal(a, b)


def test_loads_a_file_laid_out_by_keras3(tmp_path):
    """A file written with Keras 3's paths (class-name numbering, user names as attributes,
    an empty input_layer group, optimizer variables)."""
    model = fkeras.Sequential([fkeras.Input((3,)), layers.Dense(2, name="a"),
                               layers.Dense(1, name="b")])
    rng = np.random.default_rng(1)
    weights = [rng.standard_normal(s).astype("float32") for s in [(3, 2), (2,), (2, 1), (1,)]]
    path = tmp_path / "keras.weights.h5"
    with h5py.File(path, "w") as f:
        f.create_group("vars").attrs["name"] = "sequential"
        for key, name, ws in [("dense", "a", weights[:2]), ("dense_1", "b", weights[2:])]:
            g = f.create_group(f"layers/{key}/vars")
            g.attrs["name"] = name
            for i, w in enumerate(ws):
                g.create_dataset(str(i), data=w)
        f.create_group("optimizer/vars").create_dataset("0", data=np.array(7))
    model.load_weights(path)
    for a, b in zip(model.get_weights(), weights):
        np.testing.assert_array_equal(a, b)
