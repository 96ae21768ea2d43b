"""Conv1D, Conv3D, the transposed convolutions, DepthwiseConv1D/2D and SeparableConv1D/2D:
run_layer_test over the main argument combinations, forward values against direct NumPy
loops (conv_refs.py), weights' shapes as Keras, Keras's error texts."""

import numpy as np
import pytest
from conv_refs import conv_nd, conv_transpose_nd
from layer_testing import run_layer_test

import fkeras
from fkeras import layers


def _first(a):
    return np.ascontiguousarray(np.moveaxis(a, -1, 1))


@pytest.mark.parametrize("cls,kw,shape,out,n_weights", [
    (layers.Conv1D, dict(filters=4, kernel_size=3), (2, 9, 3), (2, 7, 4), 2),
    (layers.Conv1D, dict(filters=4, kernel_size=3, padding="causal", dilation_rate=2),
     (2, 9, 3), (2, 9, 4), 2),
    (layers.Conv1D, dict(filters=4, kernel_size=2, strides=2, padding="causal", groups=2,
                         data_format="channels_first", use_bias=False), (2, 4, 9), (2, 4, 5),
     1),
    (layers.Conv3D, dict(filters=3, kernel_size=2, activation="relu"), (2, 4, 5, 3, 2),
     (2, 3, 4, 2, 3), 2),
    (layers.Conv3D, dict(filters=4, kernel_size=3, strides=2, padding="same", groups=2,
                         data_format="channels_first"), (2, 2, 5, 4, 3), (2, 4, 3, 2, 2), 2),
    (layers.Conv1DTranspose, dict(filters=3, kernel_size=3, strides=2), (2, 4, 2), (2, 9, 3),
     2),
    (layers.Conv2DTranspose, dict(filters=3, kernel_size=3, strides=2, padding="same",
                                  output_padding=1), (2, 4, 3, 2), (2, 8, 6, 3), 2),
    (layers.Conv2DTranspose, dict(filters=2, kernel_size=2, dilation_rate=2,
                                  data_format="channels_first", activation="tanh"),
     (2, 3, 4, 3), (2, 2, 6, 5), 2),
    (layers.Conv3DTranspose, dict(filters=2, kernel_size=2, strides=2), (2, 2, 3, 2, 3),
     (2, 4, 6, 4, 2), 2),
    (layers.DepthwiseConv1D, dict(kernel_size=3, depth_multiplier=2), (2, 7, 3), (2, 5, 6), 2),
    (layers.DepthwiseConv2D, dict(kernel_size=3, strides=2, padding="same",
                                  data_format="channels_first"), (2, 3, 7, 6), (2, 3, 4, 3),
     2),
    (layers.SeparableConv1D, dict(filters=5, kernel_size=3, padding="same"), (2, 7, 3),
     (2, 7, 5), 3),
    (layers.SeparableConv2D, dict(filters=5, kernel_size=2, depth_multiplier=2,
                                  use_bias=False, activation="relu"), (2, 5, 6, 3),
     (2, 4, 5, 5), 2),
])
def test_run_layer_test(cls, kw, shape, out, n_weights):
    run_layer_test(cls, kw, input_shape=shape, expected_output_shape=out,
                   expected_num_trainable_weights=n_weights,
                   expected_num_non_trainable_weights=0)


@pytest.mark.parametrize("kw", [dict(kernel_size=3, padding="valid"),
                                dict(kernel_size=3, strides=2, padding="same", groups=2),
                                dict(kernel_size=2, dilation_rate=3, padding="same")])
@pytest.mark.parametrize("fmt", ["channels_last", "channels_first"])
def test_conv1d_and_conv3d_values(kw, fmt):
    rng = np.random.default_rng(0)
    for rank, shape in ((1, (2, 9, 4)), (3, (2, 5, 4, 6, 4))):
        x = rng.standard_normal(shape).astype(np.float32)
        layer = (layers.Conv1D if rank == 1 else layers.Conv3D)(6, data_format=fmt, **kw)
        y = np.asarray(layer(x if fmt == "channels_last" else _first(x)))
        w, b = layer.get_weights()
        want = conv_nd(x, w, b, layer.strides, layer.dilation_rate, kw["padding"])
        np.testing.assert_allclose(y, want if fmt == "channels_last" else _first(want),
                                   rtol=1e-5, atol=1e-5)


def test_causal_conv1d_is_causal_and_left_padded():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 8, 2)).astype(np.float32)
    layer = layers.Conv1D(3, 3, padding="causal", dilation_rate=2)
    y = np.asarray(layer(x))
    w, b = layer.get_weights()
    xp = np.concatenate([np.zeros((1, 4, 2), np.float32), x], axis=1)
    np.testing.assert_allclose(y, conv_nd(xp, w, b, (1,), (2,), "valid"), rtol=1e-5,
                               atol=1e-5)
    x2 = x.copy()
    x2[:, 5:] += 1.0  # changing steps >= 5 leaves outputs 0..4 unchanged
    np.testing.assert_allclose(np.asarray(layer(x2))[:, :5], y[:, :5], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_conv_transpose_values_and_kernel_layout(rank):
    rng = np.random.default_rng(2)
    cls = (layers.Conv1DTranspose, layers.Conv2DTranspose, layers.Conv3DTranspose)[rank - 1]
    x = rng.standard_normal((2,) + (4, 3, 2)[:rank] + (3,)).astype(np.float32)
    layer = cls(5, 3, strides=2, padding="same")
    y = np.asarray(layer(x))
    w, b = layer.get_weights()
    assert w.shape == (3,) * rank + (5, 3)  # (*kernel_size, filters, in_channels)
    np.testing.assert_allclose(y, conv_transpose_nd(x, w, b, (2,) * rank, (1,) * rank, "same"),
                               rtol=1e-5, atol=1e-5)
    assert y.shape[1:-1] == tuple(2 * s for s in x.shape[1:-1])


def test_depthwise_and_separable_weights_and_values():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 6, 5, 3)).astype(np.float32)
    dw = layers.DepthwiseConv2D(3, depth_multiplier=2, padding="same")
    y = np.asarray(dw(x))
    k, b = dw.get_weights()
    assert k.shape == (3, 3, 3, 2) and b.shape == (6,)
    want = np.concatenate([conv_nd(x[..., c:c + 1], k[..., c:c + 1, :], padding="same")
                           for c in range(3)], axis=-1) + b
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    sep = layers.SeparableConv2D(4, 3, depth_multiplier=2, padding="same")
    y = np.asarray(sep(x))
    d, p, b = sep.get_weights()
    assert (d.shape, p.shape, b.shape) == ((3, 3, 3, 2), (1, 1, 6, 4), (4,))
    want = conv_nd(np.concatenate([conv_nd(x[..., c:c + 1], d[..., c:c + 1, :],
                                           padding="same") for c in range(3)], -1), p, b)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    assert [w.path.split("/")[-1] for w in sep.weights] == \
        ["depthwise_kernel", "pointwise_kernel", "bias"]


def test_aliases_and_config_keys():
    assert layers.Convolution1D is layers.Conv1D and layers.Convolution3D is layers.Conv3D
    assert layers.Convolution2DTranspose is layers.Conv2DTranspose
    assert layers.SeparableConvolution2D is layers.SeparableConv2D
    cfg = layers.Conv3DTranspose(2, 3, output_padding=(0, 1, 0), strides=2).get_config()
    assert cfg["output_padding"] == (0, 1, 0) and cfg["strides"] == (2, 2, 2)
    assert list(layers.DepthwiseConv2D(3).get_config())[-9:] == [
        "activation", "use_bias", "depthwise_initializer", "bias_initializer",
        "depthwise_regularizer", "bias_regularizer", "activity_regularizer",
        "depthwise_constraint", "bias_constraint"]


@pytest.mark.parametrize("make,message", [
    (lambda: layers.Conv2D(2, 3, padding="causal"),
     "The `padding` argument must be a list/tuple or one of {'valid', 'same'}. Received: "
     "causal"),
    (lambda: layers.Conv1D(2, 3, padding="full"),
     "The `padding` argument must be a list/tuple or one of {'valid', 'same', 'causal'}. "
     "Received: full"),
    (lambda: layers.Conv2D(2, (3, 0)),
     "The `kernel_size` argument must be a tuple of 2 integers. Received kernel_size=(3, 0), "
     "including values {0} that do not satisfy `value > 0`"),
    (lambda: layers.Conv2DTranspose(2, 3, strides=2, output_padding=-1),
     "The `output_padding` argument must be a tuple of 2 integers. Received "
     "output_padding=-1, including values {-1} that do not satisfy `value >= 0`"),
    (lambda: layers.MaxPooling1D(0),
     "The `pool_size` argument must be a tuple of 1 integers. Received pool_size=0, including "
     "values {0} that do not satisfy `value > 0`"),
    (lambda: layers.ZeroPadding3D((1, 2)), "`padding` should have 3 elements. Received: (1, 2)."),
    (lambda: layers.Conv3D(2, (3, 3)),
     "The `kernel_size` argument must be a tuple of 3 integers. Received kernel_size=(3, 3)"),
    (lambda: layers.Conv2DTranspose(2, 3, strides=2, output_padding=2),
     "`output_padding` must be strictly less than `strides` for all dimensions. At "
     "dimension 0, `output_padding` is 2 but `strides` is 2. Received: "
     "output_padding=(2, 2), strides=(2, 2)"),
    (lambda: layers.DepthwiseConv2D(3, depth_multiplier=0),
     "Invalid value for argument `depth_multiplier`. Expected a strictly positive value. "
     "Received depth_multiplier=0."),
    (lambda: layers.SeparableConv1D(0, 3),
     "Invalid value for argument `filters`. Expected a strictly positive value. Received "
     "filters=0."),
    (lambda: layers.Conv1D(4, 3, strides=2, dilation_rate=2),
     "`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
     "strides=(2,) and dilation_rate=(2,)"),
])
def test_argument_errors(make, message):
    with pytest.raises(ValueError) as info:
        make()
    assert str(info.value) == message


def test_input_errors():
    with pytest.raises(ValueError, match='layer "conv3d" is incompatible with the layer: '
                                         "expected min_ndim=5, found ndim=4"):
        layers.Conv3D(2, 3, name="conv3d")(fkeras.Input(shape=(5, 5, 3)))
    with pytest.raises(ValueError, match="Computed output size would be zero or negative"):
        layers.Conv1D(2, 5)(fkeras.Input(shape=(3, 1)))
    with pytest.raises(ValueError, match="The channel dimension of the inputs should be"):
        layers.DepthwiseConv1D(3)(fkeras.Input(shape=(5, None)))
    assert layers.Conv2DTranspose(2, 3)(fkeras.Input(shape=(None, 4, 3))).shape == \
        (None, None, 6, 2)
