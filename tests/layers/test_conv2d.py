"""Conv2D: symbolic shapes over argument combinations, eager values against a direct NumPy
convolution, weights, config round trip, Keras error texts."""

import numpy as np
import pytest
from layer_refs import conv2d_nhwc

import fkeras
from fkeras import layers


def _first(a):
    return np.ascontiguousarray(np.moveaxis(a, -1, 1))


@pytest.mark.parametrize("padding,strides,dilation,hw", [
    ("valid", 1, 1, (28, 24)), ("valid", 1, 2, (24, 20)), ("valid", 2, 1, (14, 12)),
    ("valid", 3, 1, (10, 8)), ("same", 1, 1, (32, 28)), ("same", 1, 2, (32, 28)),
    ("same", 2, 1, (16, 14)), ("same", 3, 1, (11, 10))])
@pytest.mark.parametrize("fmt", ["channels_last", "channels_first"])
def test_symbolic_output_shapes(padding, strides, dilation, hw, fmt):
    shape = (32, 28, 3) if fmt == "channels_last" else (3, 32, 28)
    layer = layers.Conv2D(8, 5, strides=strides, padding=padding, dilation_rate=dilation,
                          data_format=fmt)
    y = layer(fkeras.Input(shape=shape))
    assert y.shape == ((None,) + hw + (8,) if fmt == "channels_last" else (None, 8) + hw)
    assert layer.compute_output_shape((None,) + shape) == y.shape
    assert layer.kernel.shape == (5, 5, 3, 8)  # (kh, kw, in, out) in both formats
    assert layer.bias.shape == (8,)


def test_unknown_spatial_dims():
    y = layers.Conv2D(8, 3)(fkeras.Input(shape=(None, None, 3)))
    assert y.shape == (None, None, None, 8)
    y = layers.Conv2D(8, 3, data_format="channels_first")(fkeras.Input(shape=(3, 32, 28)))
    assert y.shape == (None, 8, 30, 26)


CASES = [
    dict(kernel_size=3, strides=1, padding="valid", dilation_rate=1, groups=1),
    dict(kernel_size=(3, 2), strides=(2, 1), padding="same", dilation_rate=1, groups=2),
    dict(kernel_size=2, strides=1, padding="same", dilation_rate=(2, 3), groups=1),
    dict(kernel_size=(4, 3), strides=(3, 2), padding="same", dilation_rate=1, groups=4),
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("fmt", ["channels_last", "channels_first"])
@pytest.mark.parametrize("activation", [None, "relu", "tanh"])
def test_forward_matches_numpy(case, fmt, activation):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 7, 8, 4)).astype(np.float32)
    layer = layers.Conv2D(8, data_format=fmt, activation=activation, **case)
    xin = x if fmt == "channels_last" else _first(x)
    layer.build(xin.shape)
    w = rng.standard_normal(layer.kernel.shape).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    layer.set_weights([w, b])
    y = np.asarray(layer(xin))
    ks = layer.kernel_size
    want = conv2d_nhwc(x, w, b, layer.strides, layer.dilation_rate, case["padding"],
                       activation or "linear")
    assert w.shape == ks + (4 // case["groups"], 8)
    np.testing.assert_allclose(y, want if fmt == "channels_last" else _first(want),
                               rtol=1e-5, atol=1e-5)


def test_no_bias_and_non_fused_activation():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 5, 5, 2)).astype(np.float32)
    layer = layers.Conv2D(3, 3, use_bias=False, activation="softplus")
    y = layer(x)
    assert len(layer.weights) == 1
    want = np.logaddexp(0, conv2d_nhwc(x, layer.kernel.numpy()))
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_config_round_trip():
    layer = layers.Conv2D(6, (3, 2), strides=(2, 1), padding="same", dilation_rate=1, groups=2,
                          activation="relu", use_bias=False, kernel_initializer="he_normal",
                          kernel_regularizer="l2", data_format="channels_first", name="c")
    config = layer.get_config()
    assert config["kernel_size"] == (3, 2) and config["strides"] == (2, 1)
    assert config["data_format"] == "channels_first" and config["groups"] == 2
    clone = layers.Conv2D.from_config(config)
    assert clone.get_config() == config


def test_data_format_default_follows_config():
    before = fkeras.config.image_data_format()
    try:
        fkeras.config.set_image_data_format("channels_first")
        assert layers.Conv2D(2, 3).data_format == "channels_first"
    finally:
        fkeras.config.set_image_data_format(before)
    assert layers.Conv2D(2, 3).data_format == before


@pytest.mark.parametrize("kwargs,message", [
    (dict(filters=0, kernel_size=3),
     "Invalid value for argument `filters`. Expected a strictly positive value. Received "
     "filters=0."),
    (dict(filters=6, kernel_size=3, groups=4),
     "The number of filters must be evenly divisible by the number of groups. Received: "
     "groups=4, filters=6."),
    (dict(filters=2, kernel_size=3, padding="causal"),
     "The `padding` argument must be a list/tuple or one of {'valid', 'same'}. Received: "
     "causal"),
    (dict(filters=2, kernel_size=3, strides=2, dilation_rate=2),
     "`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
     "strides=(2, 2) and dilation_rate=(2, 2)"),
    (dict(filters=2, kernel_size=(3, 3, 3)),
     "The `kernel_size` argument must be a tuple of 2 integers. Received "
     "kernel_size=(3, 3, 3)"),
    (dict(filters=2, kernel_size=3, data_format="nhwc"),
     "The `data_format` argument must be one of {'channels_first', 'channels_last'}. "
     "Received: data_format=nhwc"),
])
def test_argument_errors(kwargs, message):
    with pytest.raises(ValueError) as info:
        layers.Conv2D(**kwargs)
    assert str(info.value) == message


def test_input_errors():
    with pytest.raises(ValueError) as info:
        layers.Conv2D(8, 3, name="conv2d")(fkeras.Input(shape=(28, 28)))
    assert str(info.value) == ('Input 0 of layer "conv2d" is incompatible with the layer: '
                               "expected min_ndim=4, found ndim=3. Full shape received: "
                               "(None, 28, 28)")
    with pytest.raises(ValueError, match="Computed output size would be zero or negative. "
                                         r"Received `inputs shape=\(None, 3, 3, 1\)`"):
        layers.Conv2D(8, 5)(fkeras.Input(shape=(3, 3, 1)))
    with pytest.raises(ValueError, match="The channel dimension of the inputs should be defined"):
        layers.Conv2D(8, 3)(fkeras.Input(shape=(5, 5, None)))
    with pytest.raises(ValueError, match="number of input channels must be evenly divisible"):
        layers.Conv2D(4, 3, groups=2)(fkeras.Input(shape=(5, 5, 3)))
    layer = layers.Conv2D(4, 3)
    layer(fkeras.Input(shape=(5, 5, 3)))
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 3"):
        layer(fkeras.Input(shape=(5, 5, 2)))


def test_gradients_flow_to_weights():
    rng = np.random.default_rng(2)
    layer = layers.Conv2D(3, 2, padding="same", activation="relu")
    x = rng.standard_normal((2, 4, 4, 2)).astype(np.float32)
    with fkeras.GradientTape() as tape:
        y = layer(x)
        loss = fkeras.ops.sum(fkeras.ops.square(y))
    gk, gb = tape.gradient(loss, layer.trainable_weights)
    assert gk.shape == layer.kernel.shape and gb.shape == (3,)
    assert np.abs(gk).sum() > 0
