"""The ops behind the N-D convolution, pooling and reshaping layers: conv3d, conv_transpose,
depthwise/separable conv, max/average pool 3-D, pad/crop, upsampling. Forward values against
direct NumPy float64 loops; gradients against central differences on the float64 reference
device with random cotangents (op_testing.fd_check)."""

import sys
from pathlib import Path

import numpy as np
import pytest
from op_testing import fd_check

import fkeras
from fkeras import ops
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.ops.padding import crop, pad
from fkeras.ops.resize import upsample_bilinear, upsample_nearest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "layers"))
from conv_refs import bilinear_upsample, conv_nd, conv_transpose_nd, pool_nd  # noqa: E402


def _first(a):
    return np.ascontiguousarray(np.moveaxis(a, -1, 1))


def _rng(seed=0):
    return np.random.default_rng(seed)


CONV3D = [dict(ks=(2, 3, 2), strides=(1, 1, 1), dil=(1, 1, 1), padding="valid", groups=1),
          dict(ks=(3, 2, 2), strides=(2, 1, 2), dil=(1, 1, 1), padding="same", groups=2),
          dict(ks=(2, 2, 3), strides=(1, 1, 1), dil=(2, 1, 2), padding="same", groups=1)]


@pytest.mark.parametrize("case", CONV3D)
@pytest.mark.parametrize("fmt", ["channels_last", "channels_first"])
def test_conv3d_forward(case, fmt):
    rng = _rng()
    x = rng.standard_normal((2, 5, 4, 6, 4)).astype(np.float32)
    w = rng.standard_normal(case["ks"] + (4 // case["groups"], 6)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    y = ops.conv3d(x if fmt == "channels_last" else _first(x), w, b, case["strides"],
                   case["padding"], fmt, case["dil"])
    want = conv_nd(x, w, b, case["strides"], case["dil"], case["padding"])
    np.testing.assert_allclose(y, want if fmt == "channels_last" else _first(want), rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("case", CONV3D)
def test_conv3d_gradients(case):
    rng = _rng(1)
    x = rng.standard_normal((2, 4, 3, 5, 4))
    w = rng.standard_normal(case["ks"] + (4 // case["groups"], 4))
    b = rng.standard_normal(4)
    fd_check(lambda x, w, b: ops.conv3d(x, w, b, case["strides"], case["padding"],
                                        "channels_first", case["dil"]),
             [x, w, b], [0, 1, 2], rng)


TRANSPOSE = [dict(rank=1, ks=(3,), strides=(2,), dil=(1,), padding="valid", op=None),
             dict(rank=1, ks=(4,), strides=(3,), dil=(1,), padding="same", op=None),
             dict(rank=2, ks=(3, 2), strides=(2, 1), dil=(1, 1), padding="same", op=None),
             dict(rank=2, ks=(3, 3), strides=(2, 2), dil=(1, 1), padding="valid", op=(1, 0)),
             dict(rank=2, ks=(2, 3), strides=(1, 1), dil=(2, 2), padding="same", op=None),
             dict(rank=2, ks=(4, 4), strides=(2, 2), dil=(1, 1), padding="same", op=(0, 0)),
             dict(rank=3, ks=(2, 3, 2), strides=(2, 1, 2), dil=(1, 1, 1), padding="same",
                  op=None),
             dict(rank=3, ks=(3, 2, 2), strides=(1, 2, 1), dil=(1, 1, 1), padding="valid",
                  op=(0, 1, 0))]


@pytest.mark.parametrize("case", TRANSPOSE)
@pytest.mark.parametrize("fmt", ["channels_last", "channels_first"])
def test_conv_transpose_forward(case, fmt):
    rng = _rng(2)
    x = rng.standard_normal((2,) + (4, 3, 5)[:case["rank"]] + (3,)).astype(np.float32)
    w = rng.standard_normal(case["ks"] + (5, 3)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    y = ops.conv_transpose(x if fmt == "channels_last" else _first(x), w, case["strides"],
                           case["padding"], case["op"], fmt, case["dil"], bias=b)
    want = conv_transpose_nd(x, w, b, case["strides"], case["dil"], case["padding"],
                             case["op"])
    sym = ops.conv_transpose(KerasTensor(x.shape if fmt == "channels_last" else
                                         _first(x).shape), w, case["strides"], case["padding"],
                             case["op"], fmt, case["dil"])
    assert sym.shape == y.shape
    np.testing.assert_allclose(y, want if fmt == "channels_last" else _first(want), rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("case", TRANSPOSE)
def test_conv_transpose_gradients(case):
    rng = _rng(3)
    x = rng.standard_normal((2,) + (3, 2, 3)[:case["rank"]] + (3,))
    w = rng.standard_normal(case["ks"] + (2, 3))
    b = rng.standard_normal(2)
    fd_check(lambda x, w, b: ops.conv_transpose(x, w, case["strides"], case["padding"],
                                                case["op"], "channels_last", case["dil"],
                                                bias=b),
             [x, w, b], [0, 1, 2], rng)


@pytest.mark.parametrize("rank,fmt", [(1, "channels_last"), (2, "channels_first"),
                                      (2, "channels_last")])
def test_depthwise_and_separable(rank, fmt):
    rng = _rng(4)
    x = rng.standard_normal((2,) + (6, 5)[:rank] + (3,)).astype(np.float32)
    dk = rng.standard_normal((3, 2)[:rank] + (3, 2)).astype(np.float32)
    pk = rng.standard_normal((1,) * rank + (6, 4)).astype(np.float32)
    xin = x if fmt == "channels_last" else _first(x)
    y = ops.depthwise_conv(xin, dk, 1, "same", fmt)
    want = np.concatenate([conv_nd(x[..., c:c + 1], dk[..., c:c + 1, :], padding="same")
                           for c in range(3)], axis=-1)  # channel c * M + m
    np.testing.assert_allclose(y, want if fmt == "channels_last" else _first(want), rtol=1e-5,
                               atol=1e-5)
    ys = ops.separable_conv(xin, dk, pk, 1, "same", fmt)
    want = conv_nd(want, pk)
    np.testing.assert_allclose(ys, want if fmt == "channels_last" else _first(want),
                               rtol=1e-5, atol=1e-5)
    fd_check(lambda x, d, p: ops.separable_conv(x, d, p, (2,) * rank, "valid", fmt),
             [xin, dk, pk], [0, 1, 2], rng)


@pytest.mark.parametrize("pool,strides,padding", [((2, 2, 2), (2, 2, 2), "valid"),
                                                  ((3, 2, 2), (2, 1, 2), "same"),
                                                  ((2, 3, 1), (1, 2, 1), "same")])
@pytest.mark.parametrize("mode", ["max", "avg"])
def test_pool3d(pool, strides, padding, mode):
    rng = _rng(5)
    x = rng.standard_normal((2, 5, 4, 5, 3)).astype(np.float32)
    fn = ops.max_pool3d if mode == "max" else ops.average_pool3d
    y = fn(x, pool, strides, padding)
    np.testing.assert_allclose(y, pool_nd(x, pool, strides, padding, mode), rtol=1e-6,
                               atol=1e-6)
    np.testing.assert_allclose(fn(_first(x), pool, strides, padding, "channels_first"),
                               _first(np.asarray(y)), rtol=1e-6, atol=1e-6)
    xg = rng.permutation(2 * 4 * 3 * 4 * 2).reshape(2, 4, 3, 4, 2) / 7.0  # no ties
    fd_check(lambda x: fn(x, pool, strides, padding, "channels_first"), [xg], [0], rng,
             eps=1e-4)


def test_pad_crop_upsample_gradients():
    rng = _rng(6)
    x = rng.standard_normal((2, 3, 4, 2))
    widths = ((0, 0), (1, 2), (0, 3), (0, 0))
    np.testing.assert_array_equal(pad(x.astype(np.float32), widths),
                                  np.pad(x.astype(np.float32), widths))
    np.testing.assert_array_equal(crop(x.astype(np.float32), ((0, 0), (1, 1), (2, 0), (0, 0))),
                                  x.astype(np.float32)[:, 1:2, 2:])
    fd_check(lambda x: pad(x, widths), [x], [0], rng)
    fd_check(lambda x: ops.pad(x, 1, constant_values=2.0), [x], [0], rng)
    assert np.asarray(ops.pad(x.astype(np.float32), 1, constant_values=2.0))[0, 0, 0, 0] == 2.0
    with pytest.raises(ValueError, match="mode='constant' only"):
        ops.pad(x, 1, mode="reflect")
    fd_check(lambda x: crop(x, ((0, 0), (1, 0), (1, 2), (0, 0))), [x], [0], rng)
    fd_check(lambda x: upsample_nearest(x, (1, 2), (2, 3)), [x], [0], rng)
    fd_check(lambda x: upsample_bilinear(x, (3, 2)), [x], [0], rng)
    x32 = x.astype(np.float32)
    np.testing.assert_array_equal(upsample_nearest(x32, (1, 2), (2, 3)),
                                  np.repeat(np.repeat(x32, 2, axis=1), 3, axis=2))
    np.testing.assert_allclose(upsample_bilinear(x.astype(np.float32), (3, 2)),
                               bilinear_upsample(x, 3, 2), rtol=1e-5, atol=1e-6)


def test_ops_on_reference_and_cpu_agree():
    rng = _rng(7)
    x = rng.standard_normal((1, 3, 4, 5, 2)).astype(np.float32)
    w = rng.standard_normal((2, 2, 3, 2, 3)).astype(np.float32)
    wt = rng.standard_normal((2, 2, 3, 3, 2)).astype(np.float32)
    with fkeras.device("reference"):
        ref = [np.asarray(ops.conv3d(x, w, None, 1, "same")),
               np.asarray(ops.conv_transpose(x, wt, 2, "same"))]
    got = [ops.conv3d(x, w, None, 1, "same"), ops.conv_transpose(x, wt, 2, "same")]
    for r, g in zip(ref, got):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-5)
