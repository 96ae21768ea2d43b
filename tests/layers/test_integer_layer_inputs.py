"""Integer and bool inputs (uint8 images, int64 data, bool flags) reaching a layer that computes
in floating point are cast to float32 before `call`, as Keras's type promotion makes them
float there; Embedding keeps its integer indices; arrays that are not numbers, and wrong ranks
or feature sizes, raise a ValueError naming the layer, never an internal kernel."""

import numpy as np
import pytest

from fkeras import layers

# name: (factory, input shape)
FLOAT_LAYERS = {
    "Dense": (lambda: layers.Dense(2), (4, 3)),
    "Conv1D": (lambda: layers.Conv1D(2, 2), (2, 5, 3)),
    "Conv2D": (lambda: layers.Conv2D(2, 2), (2, 5, 5, 3)),
    "Conv3D": (lambda: layers.Conv3D(2, 2), (2, 4, 4, 4, 3)),
    "Conv2DTranspose": (lambda: layers.Conv2DTranspose(2, 2), (2, 4, 4, 3)),
    "SeparableConv2D": (lambda: layers.SeparableConv2D(2, 2), (2, 5, 5, 3)),
    "DepthwiseConv2D": (lambda: layers.DepthwiseConv2D(2), (2, 5, 5, 3)),
    "LSTM": (lambda: layers.LSTM(2), (2, 4, 3)),
    "GRU": (lambda: layers.GRU(2, return_sequences=True), (2, 4, 3)),
    "SimpleRNN": (lambda: layers.SimpleRNN(2), (2, 4, 3)),
    "Bidirectional": (lambda: layers.Bidirectional(layers.LSTM(2)), (2, 4, 3)),
    "TimeDistributed": (lambda: layers.TimeDistributed(layers.Dense(2)), (2, 4, 3)),
    "BatchNormalization": (lambda: layers.BatchNormalization(), (4, 3)),
    "LayerNormalization": (lambda: layers.LayerNormalization(), (4, 3)),
    "GroupNormalization": (lambda: layers.GroupNormalization(groups=3), (2, 4, 3)),
    "UnitNormalization": (lambda: layers.UnitNormalization(), (4, 3)),
    "MaxPooling1D": (lambda: layers.MaxPooling1D(), (2, 4, 3)),
    "MaxPooling2D": (lambda: layers.MaxPooling2D(), (2, 4, 4, 3)),
    "AveragePooling2D": (lambda: layers.AveragePooling2D(), (2, 4, 4, 3)),
    "MaxPooling3D": (lambda: layers.MaxPooling3D(), (2, 4, 4, 4, 3)),
    "GlobalAveragePooling2D": (lambda: layers.GlobalAveragePooling2D(), (2, 4, 4, 3)),
    "GlobalMaxPooling1D": (lambda: layers.GlobalMaxPooling1D(), (2, 4, 3)),
    "Activation": (lambda: layers.Activation("sigmoid"), (4, 3)),
    "ReLU": (lambda: layers.ReLU(), (4, 3)),
    "Softmax": (lambda: layers.Softmax(), (4, 3)),
    "PReLU": (lambda: layers.PReLU(), (4, 3)),
    "Average": (lambda: layers.Average(), None),
}
DTYPES = ["uint8", "int32", "int64", "bool"]


def _data(shape, dtype, seed=0):
    values = np.random.default_rng(seed).integers(0, 4, size=shape)
    return values.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(FLOAT_LAYERS))
def test_integer_input_equals_the_same_values_as_float32(name, dtype):
    make, shape = FLOAT_LAYERS[name]
    layer = make()
    if shape is None:  # a merge layer: a list of inputs
        a, b = _data((4, 3), dtype, 0), _data((4, 3), dtype, 1)
        got, want = layer([a, b]), layer([a.astype("float32"), b.astype("float32")])
    else:
        a = _data(shape, dtype)
        want = layer(a.astype("float32"))  # builds the layer: both calls share its weights
        got = layer(a)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dropout_in_training_takes_integers(dtype):
    layer = layers.Dropout(0.5, seed=3)
    a = _data((8, 5), dtype) + (dtype != "bool")
    got = layer(a, training=True)
    want = layers.Dropout(0.5, seed=3)(a.astype("float32"), training=True)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["uint8", "int32", "int64"])
def test_embedding_keeps_integer_indices(dtype):
    layer = layers.Embedding(10, 3)
    idx = np.array([[1, 9, 0]], dtype=dtype)
    out = layer(idx)
    np.testing.assert_array_equal(out[0], layer.get_weights()[0][[1, 9, 0]])


@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_structural_layers_keep_integers(dtype):
    """Flatten / Reshape / Add move or combine integers without arithmetic that needs floats:
    their output keeps the input's dtype (as in Keras)."""
    a = _data((2, 3, 2), dtype)
    assert layers.Flatten()(a).dtype == np.dtype(dtype)
    assert layers.Reshape((6,))(a).dtype == np.dtype(dtype)


def test_float_indices_must_be_whole_numbers():
    layer = layers.Embedding(10, 2, name="tokens")
    np.testing.assert_array_equal(layer(np.array([[1.0, 2.0]], "float32")),
                                  layer(np.array([[1, 2]])))
    for bad in (1.5, np.nan, np.inf):
        with pytest.raises(ValueError, match=r'Layer "tokens" \(Embedding\): .*whole numbers'):
            layer(np.array([[bad, 2.0]], "float32"))


# (call, expected substring); every row raises ValueError.
def _built(layer, shape):
    layer(np.ones(shape, "float32"))
    return layer


BAD_CALLS = {
    "dense-rank1": (lambda: layers.Dense(2, name="d")(np.ones(3, "float32")),
                    'Input 0 of layer "d" is incompatible with the layer: expected min_ndim=2, '
                    "found ndim=1. Full shape received: (3,)"),
    "conv2d-rank3": (lambda: layers.Conv2D(2, 2, name="c")(np.ones((5, 5, 3), "float32")),
                     'Input 0 of layer "c" is incompatible with the layer: expected min_ndim=4, '
                     "found ndim=3"),
    "conv2d-channels": (lambda: _built(layers.Conv2D(2, 2, name="c"), (1, 5, 5, 3))(
        np.ones((1, 5, 5, 4), "float32")), "expected axis -1 of input shape to have value 3"),
    "lstm-rank2": (lambda: layers.LSTM(2, name="r")(np.ones((4, 3), "float32")),
                   'layer "r" is incompatible with the layer: expected ndim=3, found ndim=2'),
    "lstm-features": (lambda: _built(layers.LSTM(2, name="r"), (1, 4, 3))(
        np.ones((1, 4, 5), "float32")), 'layer "r" is incompatible'),
    "bidirectional-features": (lambda: _built(layers.Bidirectional(layers.LSTM(2), name="b"),
                                              (1, 4, 3))(np.ones((1, 4, 5), "float32")),
                               'layer "b" is incompatible'),
    "time-distributed-features": (
        lambda: _built(layers.TimeDistributed(layers.Dense(2, name="inner")), (1, 4, 3))(
            np.ones((1, 4, 5), "float32")), 'layer "inner" is incompatible'),
    "time-distributed-rank1": (
        lambda: _built(layers.TimeDistributed(layers.Dense(2)), (1, 4, 3))(
            np.ones(3, "float32")), "at least 3 dimensions"),
    "layer-norm-features": (lambda: _built(layers.LayerNormalization(name="ln"), (2, 3))(
        np.ones((2, 4), "float32")), 'layer "ln" is incompatible'),
    "layer-norm-rank": (lambda: _built(layers.LayerNormalization(name="ln"), (2, 3))(
        np.ones(3, "float32")), "expected ndim=2, found ndim=1"),
    "batch-norm-features": (lambda: _built(layers.BatchNormalization(name="bn"), (2, 3))(
        np.ones((2, 4), "float32")), 'layer "bn" is incompatible'),
    "embedding-out-of-range": (lambda: layers.Embedding(10, 2, name="e")(np.array([[10]])),
                               'Layer "e" (Embedding): `embedding`: index 10 is out of range'),
    "dense-strings": (lambda: layers.Dense(2, name="d")(np.array([["a", "b"]])),
                      'Input 0 of layer "d" has dtype <U1'),
    "conv-objects": (lambda: layers.Conv1D(2, 2, name="c")(np.ones((1, 4, 3), dtype=object)),
                     'Input 0 of layer "c" has dtype object'),
}


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_errors_name_the_layer_not_a_kernel(case):
    call, match = BAD_CALLS[case]
    with pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    assert match in message
    for internal in ("_forward", "argument 'x'", "cannot reshape", "kernel must have shape"):
        assert internal not in message


@pytest.mark.parametrize("name", ["Dense", "LSTM", "GRU", "SimpleRNN", "BatchNormalization",
                                  "GlobalAveragePooling2D"])
def test_uint8_output_matches_keras(name):
    """Keras 3 (torch) promotes uint8 data to float32 in these layers: same output."""
    from keras_parity import ATOL, RTOL, keras, to_np

    make, shape = FLOAT_LAYERS[name]
    a = _data(shape, "uint8")
    ours = make()
    ours(a.astype("float32"))
    theirs = getattr(keras.layers, name)(**_keras_args(name))
    theirs(a.astype("float32"))
    theirs.set_weights(ours.get_weights())
    np.testing.assert_allclose(ours(a), to_np(theirs(a)), rtol=RTOL, atol=ATOL)


def _keras_args(name):
    return {"Dense": {"units": 2}, "LSTM": {"units": 2}, "SimpleRNN": {"units": 2},
            "GRU": {"units": 2, "return_sequences": True}}.get(name, {})
