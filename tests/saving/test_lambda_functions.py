"""Lambda layers wrapping fkeras activations and ops: saved under their public name, loaded
back (issue: `Lambda(fkeras.activations.relu)` could not be reloaded), and exchanged with real
Keras 3 `.keras` files both ways (skipped without keras)."""

import importlib.util
import os

import numpy as np
import pytest

import fkeras
from fkeras import activations, layers, ops

pytest.importorskip("h5py")

X = np.random.default_rng(0).standard_normal((3, 4)).astype("float32")

# (fkeras function, the entry it is saved as)
FUNCTIONS = [
    (activations.relu, ("keras.activations", "relu")),
    (activations.tanh, ("keras.activations", "tanh")),
    (activations.sigmoid, ("keras.activations", "sigmoid")),
    (activations.softmax, ("keras.activations", "softmax")),
    (activations.gelu, ("keras.activations", "gelu")),
    (ops.relu, ("keras.ops", "relu")),  # not the activation (which takes relu's options)
    (ops.gelu, ("keras.ops", "gelu")),          # approximate by default: not the activation
    (ops.softmax, ("keras.ops", "softmax")),
    (ops.square, ("keras.ops", "square")),
    (ops.exp, ("keras.ops", "exp")),
]


def model_with(fn, lib=fkeras):
    inp = lib.Input((4,), name="x")
    h = lib.layers.Dense(4, name="d")(inp)
    return lib.Model(inp, lib.layers.Lambda(fn, name="lam")(h))


@pytest.mark.parametrize("fn,entry", FUNCTIONS, ids=lambda v: getattr(v, "__name__", str(v)))
def test_lambda_of_a_builtin_round_trips(tmp_path, fn, entry):
    config = layers.Lambda(fn).get_config()["function"]
    assert (config["module"], config["config"]) == entry
    model = model_with(fn)
    model.save(tmp_path / "m.keras")
    loaded = fkeras.models.load_model(tmp_path / "m.keras")
    assert loaded.get_layer("lam").function is fn
    np.testing.assert_array_equal(loaded.predict(X, verbose=0), model.predict(X, verbose=0))


@pytest.mark.parametrize("module", ["keras.activations", "keras.src.activations.activations",
                                    "fkeras.activations", "fkeras.ops.nn", "keras.ops",
                                    "keras.src.ops.nn", "builtins"])
def test_module_names_of_either_library_resolve(module):
    entry = {"module": module, "class_name": "function", "config": "relu",
             "registered_name": None}
    layer = layers.Lambda.from_config({"function": entry})
    # The module picks the namespace; "builtins" (Keras 3) looks in activations first.
    assert layer.function is (ops.relu if "ops" in module else activations.relu)


def _keras():
    if "KERAS_BACKEND" not in os.environ and importlib.util.find_spec("torch") is not None:
        os.environ["KERAS_BACKEND"] = "torch"
    return pytest.importorskip("keras")


@pytest.mark.parametrize("name", ["relu", "tanh", "sigmoid", "softmax", "square"])
def test_fkeras_lambda_files_load_in_keras(tmp_path, name):
    keras = _keras()
    fn = getattr(activations, name, None) or getattr(ops, name)
    model = model_with(fn)
    model.save(tmp_path / "f.keras")
    theirs = keras.saving.load_model(tmp_path / "f.keras")
    np.testing.assert_allclose(keras.ops.convert_to_numpy(theirs.predict(X, verbose=0)),
                               model.predict(X, verbose=0), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["relu", "tanh", "sigmoid", "softmax", "square"])
def test_keras_lambda_files_load_in_fkeras(tmp_path, name):
    keras = _keras()
    fn = getattr(keras.activations, name, None) or getattr(keras.ops, name)
    theirs = model_with(fn, keras)
    theirs.save(tmp_path / "k.keras")
    ours = fkeras.models.load_model(tmp_path / "k.keras")
    np.testing.assert_allclose(ours.predict(X, verbose=0),
                               keras.ops.convert_to_numpy(theirs.predict(X, verbose=0)),
                               rtol=1e-5, atol=1e-6)
