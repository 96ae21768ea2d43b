"""Input / InputLayer / Layer dtypes: every Keras dtype name is accepted and carried by the
KerasTensor (compared with Keras 3 when installed); a string Input takes NumPy string arrays
through eager calls, predict and fit to the layers that handle them."""

import importlib.util
import os

import numpy as np
import pytest

import fkeras
from fkeras.engine.dtypes import standardize_dtype

NAMES = ["string", "int16", "int32", "int64", "uint8", "uint16", "uint32", "bool", "float16",
         "bfloat16", "float32", "float64"]


@pytest.mark.parametrize("dtype", NAMES + ["int8"])
def test_input_carries_dtype(dtype):
    t = fkeras.Input((1,), dtype=dtype)
    assert t.dtype == dtype
    assert fkeras.layers.InputLayer(shape=(1,), dtype=dtype).dtype == dtype
    assert fkeras.layers.Input(shape=(2,), dtype=dtype).dtype == dtype
    assert fkeras.layers.Dense(2, dtype=dtype).dtype == dtype


@pytest.mark.parametrize("given,name", [(np.float32, "float32"), (np.dtype("int8"), "int8"),
                                        ("int", "int32"), (None, "float32"),
                                        ({"class_name": "DTypePolicy",
                                          "config": {"name": "float16"}}, "float16")])
def test_standardize_dtype_forms(given, name):
    assert standardize_dtype(given) == name


@pytest.mark.parametrize("bad", ["float", "mixed_float16", "complex7", object()])
def test_invalid_input_dtypes(bad):
    with pytest.raises(ValueError, match="Invalid dtype"):
        fkeras.Input((1,), dtype=bad)


def test_layer_policy_names():
    # Keras 3: a layer's dtype is its variable dtype; the policy is in dtype_policy.
    layer = fkeras.layers.Dense(2, dtype="mixed_bfloat16")
    assert (layer.dtype, layer.compute_dtype, layer.dtype_policy.name) == \
        ("float32", "bfloat16", "mixed_bfloat16")
    with pytest.raises(ValueError, match="mixed_float16"):
        fkeras.layers.Dense(2, dtype="mixed_float16")  # no float16 kernels: refused


def _suffix_model():
    inp = fkeras.Input(shape=(1,), dtype="string")
    out = fkeras.layers.Lambda(lambda s: np.char.add(np.asarray(s).astype(str), "!"),
                               output_shape=(1,))(inp)
    return fkeras.Model(inp, out)


@pytest.mark.parametrize("x", [np.array([["a"], ["bb"], ["c"]], dtype=object),
                               np.array([["a"], ["bb"], ["c"]])])
def test_string_input_eager_and_predict(x):
    model = _suffix_model()
    expected = [["a!"], ["bb!"], ["c!"]]
    assert np.asarray(model(x)).tolist() == expected
    assert model.predict(x, batch_size=2, verbose=0).tolist() == expected


def test_string_input_trains_through_a_lambda():
    words = np.array([["a"], ["bbbb"], ["cc"], ["dddddd"]] * 8, dtype=object)
    lengths = np.vectorize(len)(words).astype("float32")
    inp = fkeras.Input(shape=(1,), dtype="string")
    feats = fkeras.layers.Lambda(lambda s: np.vectorize(len)(np.asarray(s)).astype("float32"),
                                 output_shape=(1,))(inp)
    model = fkeras.Model(inp, fkeras.layers.Dense(1, kernel_initializer="zeros")(feats))
    model.compile(fkeras.optimizers.SGD(0.01), "mse")
    hist = model.fit(words, 2.0 * lengths, epochs=30, batch_size=8, verbose=0)
    assert hist.history["loss"][-1] < 0.05 * hist.history["loss"][0]


def test_non_text_object_data_is_refused():
    inp = fkeras.Input((1,))
    model = fkeras.Model(inp, fkeras.layers.Dense(1)(inp))
    with pytest.raises(ValueError, match="Unsupported data type object"):
        model.predict(np.array([[1], [None]], dtype=object), verbose=0)


def test_dtypes_match_keras():
    if "KERAS_BACKEND" not in os.environ and importlib.util.find_spec("torch") is not None:
        os.environ["KERAS_BACKEND"] = "torch"
    keras = pytest.importorskip("keras")
    for dtype in NAMES + ["int", np.float32]:
        assert fkeras.Input((1,), dtype=dtype).dtype == keras.Input((1,), dtype=dtype).dtype
        assert (fkeras.layers.InputLayer(shape=(1,), dtype=dtype).dtype
                == keras.layers.InputLayer(shape=(1,), dtype=dtype).dtype)
    for bad in ("float", "mixed_float16"):
        with pytest.raises(ValueError, match="Invalid dtype"):
            keras.Input((1,), dtype=bad)
        with pytest.raises(ValueError, match="Invalid dtype"):
            fkeras.Input((1,), dtype=bad)
    inp = keras.Input(shape=(1,), dtype="string")
    ours = fkeras.Input(shape=(1,), dtype="string")
    assert keras.Model(inp, keras.layers.Lambda(lambda s: s, output_shape=(1,))(inp)
                       ).inputs[0].dtype == fkeras.Model(
        ours, fkeras.layers.Lambda(lambda s: s, output_shape=(1,))(ours)).inputs[0].dtype
