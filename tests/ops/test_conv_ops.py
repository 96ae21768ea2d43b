"""Convolution and pooling ops: symbolic shapes, values, and gradients (finite differences on
the float64 reference device with random cotangents)."""

import numpy as np
import pytest
from op_testing import fd_check

from fkeras import ops
from fkeras.engine.keras_tensor import KerasTensor


def _to_first(a):
    return np.ascontiguousarray(np.moveaxis(a, -1, 1))


# Keras's verified table (32 x 28 input, k = 5): (padding, strides, dilation) -> (P, Q).
TABLE = [("valid", 1, 1, (28, 24)), ("valid", 1, 2, (24, 20)), ("valid", 2, 1, (14, 12)),
         ("valid", 3, 1, (10, 8)), ("same", 1, 1, (32, 28)), ("same", 1, 2, (32, 28)),
         ("same", 2, 1, (16, 14)), ("same", 3, 1, (11, 10))]


@pytest.mark.parametrize("padding,stride,dil,pq", TABLE)
@pytest.mark.parametrize("fmt", ["channels_last", "channels_first"])
def test_conv_symbolic_shapes_match_keras_table(padding, stride, dil, pq, fmt):
    x = KerasTensor((None, 32, 28, 3) if fmt == "channels_last" else (None, 3, 32, 28))
    y = ops.conv(x, np.zeros((5, 5, 3, 8), np.float32), strides=stride, padding=padding,
                 dilation_rate=dil, data_format=fmt)
    assert y.shape == ((None,) + pq + (8,) if fmt == "channels_last" else (None, 8) + pq)


def test_conv_unknown_spatial_dims_and_errors():
    assert ops.conv(KerasTensor((None, None, None, 3)), np.zeros((3, 3, 3, 8))).shape == \
        (None, None, None, 8)
    with pytest.raises(ValueError, match="Computed output size would be zero or negative"):
        ops.conv(KerasTensor((None, 3, 3, 1)), np.zeros((5, 5, 1, 8)))
    with pytest.raises(ValueError, match="Kernel shape must have the same length as input"):
        ops.conv(KerasTensor((None, 5, 5, 3)), np.zeros((3, 3, 8)))
    with pytest.raises(ValueError, match="padding"):
        ops.conv(np.zeros((1, 5, 5, 3)), np.zeros((3, 3, 3, 8)), padding="causal")


def test_conv_values_both_formats_and_1d():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 6, 5, 4)).astype(np.float32)
    k = rng.standard_normal((3, 2, 2, 6)).astype(np.float32)  # groups = 2
    y = ops.conv(x, k, strides=(2, 1), padding="same")
    # Direct sum over the window, written out for one output position per group.
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 1), (0, 1), (0, 0)))  # TF: extra pad at end
    for n, p, q, kk in [(0, 0, 0, 0), (1, 2, 4, 5), (1, 1, 3, 3)]:
        g = kk // 3
        win = xp[n, 2 * p:2 * p + 3, q:q + 2, 2 * g:2 * g + 2]
        np.testing.assert_allclose(y[n, p, q, kk], np.sum(win * k[..., kk]), rtol=1e-5,
                                   atol=1e-5)
    y_first = ops.conv(_to_first(x), k, strides=(2, 1), padding="same",
                       data_format="channels_first")
    np.testing.assert_allclose(y_first, _to_first(y), rtol=1e-6, atol=1e-6)
    # A 1-D convolution is the 2-D one with H = 1.
    y1 = ops.conv(x[:, 0], k[0], padding="valid")
    np.testing.assert_allclose(y1, ops.conv(x[:, :1], k[:1])[:, 0], rtol=1e-6, atol=1e-6)


CONV_GRADS = [
    dict(strides=(1, 1), padding="valid", dilation_rate=1, data_format="channels_last"),
    dict(strides=(2, 1), padding="same", dilation_rate=1, data_format="channels_last"),
    dict(strides=1, padding="same", dilation_rate=(2, 1), data_format="channels_first"),
]


@pytest.mark.parametrize("kw", CONV_GRADS)
@pytest.mark.parametrize("activation", ["linear", "relu", "sigmoid"])
def test_conv2d_gradients(kw, activation):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 5, 6, 4) if kw["data_format"] == "channels_last" else (2, 4, 5, 6))
    k = rng.standard_normal((3, 2, 2, 4))  # groups = 2
    b = rng.standard_normal(4)
    fd_check(lambda x_, k_, b_: ops.conv2d(x_, k_, b_, activation=activation, **kw), [x, k, b],
             wrt=(0, 1, 2), rng=rng)


def test_conv_1d_gradients():
    rng = np.random.default_rng(2)
    fd_check(lambda x_, k_: ops.conv(x_, k_, strides=2, padding="same"),
             [rng.standard_normal((2, 7, 3)), rng.standard_normal((3, 3, 4))], wrt=(0, 1),
             rng=rng)


@pytest.mark.parametrize("padding", ["valid", "same"])
@pytest.mark.parametrize("fmt", ["channels_last", "channels_first"])
def test_pool_shapes(padding, fmt):
    x = KerasTensor((None, 7, 7, 3) if fmt == "channels_last" else (None, 3, 7, 7))
    side = 3 if padding == "valid" else 4
    for pool, strides in [(2, None), (3, 2)]:
        want = (None, side, side, 3) if fmt == "channels_last" else (None, 3, side, side)
        assert ops.max_pool(x, pool, strides, padding, fmt).shape == want
        assert ops.average_pool(x, pool, strides, padding, fmt).shape == want


def test_average_pool_same_excludes_padding():
    x = np.arange(1, 10, dtype=np.float32).reshape(1, 3, 3, 1)
    y = ops.average_pool(x, 2, 2, padding="same")
    np.testing.assert_allclose(y[0, :, :, 0], [[3.0, 4.5], [7.5, 9.0]])
    np.testing.assert_allclose(ops.max_pool(-x, 2, 2, padding="same")[0, :, :, 0],
                               [[-1.0, -3.0], [-7.0, -9.0]])


@pytest.mark.parametrize("fn", [ops.max_pool, ops.average_pool], ids=["max", "avg"])
@pytest.mark.parametrize("fmt", ["channels_last", "channels_first"])
def test_pool_gradients(fn, fmt):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5, 6, 3))
    if fmt == "channels_first":
        x = _to_first(x)
    fd_check(lambda x_: fn(x_, (2, 3), (2, 2), "same", fmt), [x], wrt=(0,), rng=rng)
    fd_check(lambda x_: fn(x_, 2, None, "valid", fmt), [x], wrt=(0,), rng=rng)
