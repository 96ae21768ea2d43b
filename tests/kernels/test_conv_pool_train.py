"""conv2d_forward_maxpool2d with indices and conv2d_maxpool2d_backward: the training form of the
fused Conv2D + MaxPooling2D op. The indices, values, dz and dbias are bit-identical to the
unfused pair's kernels (conv2d_forward, maxpool2d_forward, maxpool2d_backward,
bias_activation_backward) on every path, ISA, thread count and under the bf16-products flag;
dz and dbias also match a float64 NumPy scatter and the reference kernel."""

import numpy as np
import pytest
from fkeras import _C
from fkeras.backend import codes
from fkeras.backend.reference import conv as ref
from bf16_testing import NATIVE, bf16, low_bits
from kernel_testing import rand
from test_conv import conv_args, conv_problem
from test_conv_pool_fused import CASES, conv_path  # noqa: F401 (fixture)

ACTS = [(codes.LINEAR, 0.0), (codes.RELU, 0.0), (codes.LEAKY_RELU, 0.2)]


def unfused(x, w, b, c, ph, pw, code, alpha, g):
    """The pair's kernels: (z, pooled y, indices, dz, dbias)."""
    N, P, Q, K = c["N"], c["P"], c["Q"], c["K"]
    Pp, Qp = P // ph, Q // pw
    z = np.empty((N, P, Q, K), np.float32)
    _C.conv2d_forward(z, x, w, b, *conv_args(c), code, alpha)
    y, idx = np.empty((N, Pp, Qp, K), np.float32), np.empty((N, Pp, Qp, K), np.int64)
    _C.maxpool2d_forward(y, idx, z, N, P, Q, K, Pp, Qp, ph, pw, ph, pw, 0, 0)
    dy = np.empty_like(z)
    _C.maxpool2d_backward(dy, g, idx, N, P, Q, K, Pp, Qp)
    dz, db = np.empty_like(z), np.empty(K, np.float32)
    _C.bias_activation_backward(dz, db, dy, z, N * P * Q, K, code, alpha)
    return z, y, idx, dz, db


def fused(x, w, b, c, ph, pw, code, alpha, g):
    N, P, Q, K = c["N"], c["P"], c["Q"], c["K"]
    shape = (N, P // ph, Q // pw, K)
    y, idx = np.full(shape, np.nan, np.float32), np.full(shape, -7, np.int64)
    _C.conv2d_forward_maxpool2d(y, x, w, b, *conv_args(c), code, alpha, ph, pw, idx)
    dz, db = np.full((N, P, Q, K), np.nan, np.float32), np.full(K, np.nan, np.float32)
    _C.conv2d_maxpool2d_backward(dz, db, g, y, idx, N, P, Q, K, ph, pw, code, alpha)
    return y, idx, dz, db


def problem(case, seed):
    c, ph, pw = case
    rng = np.random.default_rng(seed)
    x = rand(rng, (c["N"], c["H"], c["W"], c["C"]))
    w = rand(rng, (c["R"], c["S"], c["C"] // c["groups"], c["K"]), 0.3)
    b = rand(rng, (c["K"],))
    g = rand(rng, (c["N"], c["P"] // ph, c["Q"] // pw, c["K"]))
    return c, ph, pw, x, w, b, g


def assert_same(got, want):
    for name, a, e in zip(("y", "indices", "dz", "dbias"), got, want):
        np.testing.assert_array_equal(a, e, err_msg=name)


@pytest.mark.parametrize("case", CASES, ids=lambda k: f"{k[0]['N']}x{k[0]['H']}x{k[0]['W']}"
                         f"x{k[0]['C']}-{k[0]['K']}_{k[0]['R']}x{k[0]['S']}_s{k[0]['stride_h']}"
                         f"_d{k[0]['dil_h']}_g{k[0]['groups']}_pool{k[1]}x{k[2]}")
@pytest.mark.parametrize("code,alpha", ACTS)
def test_equals_unfused_pair(case, code, alpha, isa, conv_path):
    c, ph, pw, x, w, b, g = problem(case, case[0]["H"] + code)
    _, y, idx, dz, db = unfused(x, w, b, c, ph, pw, code, alpha, g)
    assert_same(fused(x, w, b, c, ph, pw, code, alpha, g), (y, idx, dz, db))


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_equals_unfused_pair_threads(threads):
    before = _C.num_threads()
    _C.set_num_threads(threads)
    try:
        # The CNN's layer 2 at batch 8: several dbias chunks, window tasks per thread.
        case = (conv_problem(8, 26, 26, 32, 64, 3, 3), 2, 2)
        c, ph, pw, x, w, b, g = problem(case, threads)
        _, y, idx, dz, db = unfused(x, w, b, c, ph, pw, codes.RELU, 0.0, g)
        assert_same(fused(x, w, b, c, ph, pw, codes.RELU, 0.0, g), (y, idx, dz, db))
    finally:
        _C.set_num_threads(before)


def test_ties_and_nan_first_in_scan_order(isa, conv_path):
    # Integer-valued products give exact ties; a NaN input reaches some windows: the indices
    # are maxpool2d_forward's (first maximum, first NaN) and dz follows them.
    case = (conv_problem(2, 9, 11, 2, 16, 2, 2), 2, 2)
    c, ph, pw, x, w, b, g = problem(case, 3)
    rng = np.random.default_rng(4)
    x = rng.integers(-1, 2, size=x.shape).astype(np.float32)
    w = rng.integers(-1, 2, size=w.shape).astype(np.float32)
    x[1, 4, 5, 1] = np.nan
    _, y, idx, dz, db = unfused(x, w, None, c, ph, pw, codes.RELU, 0.0, g)
    got = fused(x, w, None, c, ph, pw, codes.RELU, 0.0, g)
    np.testing.assert_array_equal(got[1], idx)
    np.testing.assert_array_equal(got[0], y)
    np.testing.assert_array_equal(got[2], dz)


@pytest.mark.skipif(not NATIVE, reason="no avx512_bf16 (VDPBF16PS) on this CPU")
@pytest.mark.parametrize("case", [CASES[0], CASES[2], CASES[5]], ids=["cnn", "odd", "pool2x3"])
def test_equals_unfused_pair_bf16(case, conv_path):
    # Under the bf16-products flag the fused kernel takes the same (bf16 direct or GEMM) path
    # as conv2d_forward: the same rounded products, bit for bit.
    c, ph, pw, x, w, b, g = problem(case, 9)
    x, w = low_bits(x), low_bits(w)
    with bf16():
        _, y, idx, dz, db = unfused(x, w, b, c, ph, pw, codes.RELU, 0.0, g)
        got = fused(x, w, b, c, ph, pw, codes.RELU, 0.0, g)
    assert_same(got, (y, idx, dz, db))
    _, y32, _, _, _ = unfused(x, w, b, c, ph, pw, codes.RELU, 0.0, g)
    assert not np.array_equal(y, y32)  # the flag did change the products


@pytest.mark.parametrize("code,alpha", ACTS)
def test_backward_matches_numpy_float64(code, alpha, isa):
    # dz = the cotangent times act'(y) at each window's maximum (numpy argmax over the window,
    # its first maximum), zeros elsewhere and in the dropped last row / column; dbias its sum.
    case = (conv_problem(3, 10, 12, 3, 32, 3, 3), 3, 3)  # P, Q = 8, 10: a row and a column out
    c, ph, pw, x, w, b, g = problem(case, 11)
    y, idx, dz, db = fused(x, w, b, c, ph, pw, code, alpha, g)
    N, P, Q, K = c["N"], c["P"], c["Q"], c["K"]
    Pp, Qp = P // ph, Q // pw
    z = np.empty((N, P, Q, K), np.float32)
    _C.conv2d_forward(z, x, w, b, *conv_args(c), code, alpha)
    win = z[:, :Pp * ph, :Qp * pw].reshape(N, Pp, ph, Qp, pw, K).transpose(0, 1, 3, 5, 2, 4)
    arg = win.reshape(N, Pp, Qp, K, ph * pw).argmax(axis=-1)
    slope = 1.0 if code == codes.LINEAR else np.where(y > 0, 1.0, float(np.float32(alpha)))
    want = np.zeros((N, Pp, ph, Qp, pw, K))
    n, i, j, k = np.indices((N, Pp, Qp, K))
    want[n, i, arg // pw, j, arg % pw, k] = g.astype(np.float64) * slope
    full = np.zeros((N, P, Q, K))
    full[:, :Pp * ph, :Qp * pw] = want.reshape(N, Pp * ph, Qp * pw, K)
    np.testing.assert_array_equal(dz, full.astype(np.float32))
    np.testing.assert_allclose(db, full.sum(axis=(0, 1, 2)), rtol=1e-5, atol=1e-5)
    rdz, rdb = np.empty((N, P, Q, K)), np.empty(K)
    ref.conv2d_maxpool2d_backward(rdz, rdb, g, y, idx, N, P, Q, K, ph, pw, code, alpha)
    np.testing.assert_allclose(rdz, full, rtol=1e-6, atol=0)  # float64 alpha in the reference
    np.testing.assert_allclose(rdb, full.sum(axis=(0, 1, 2)), rtol=1e-6, atol=1e-9)


def test_backward_optional_outputs():
    case = (conv_problem(2, 9, 9, 2, 16, 3, 3), 2, 2)
    c, ph, pw, x, w, b, g = problem(case, 2)
    y, idx, dz, db = fused(x, w, b, c, ph, pw, codes.RELU, 0.0, g)
    N, P, Q, K = c["N"], c["P"], c["Q"], c["K"]
    only_db = np.empty(K, np.float32)
    _C.conv2d_maxpool2d_backward(None, only_db, g, y, idx, N, P, Q, K, ph, pw, codes.RELU, 0.0)
    np.testing.assert_array_equal(only_db, db)
    only_dz = np.empty_like(dz)
    _C.conv2d_maxpool2d_backward(only_dz, None, g, y, idx, N, P, Q, K, ph, pw, codes.RELU, 0.0)
    np.testing.assert_array_equal(only_dz, dz)


def test_rejects_bad_arguments():
    k = "conv2d_maxpool2d_backward"
    f32 = lambda *s: np.zeros(s, np.float32)  # noqa: E731
    i64 = np.zeros((1, 2, 2, 16), np.int64)
    with pytest.raises(ValueError, match=f"{k}.*activation"):
        _C.conv2d_maxpool2d_backward(f32(1, 4, 4, 16), None, f32(1, 2, 2, 16), f32(1, 2, 2, 16),
                                     i64, 1, 4, 4, 16, 2, 2, codes.TANH, 0.0)
    with pytest.raises(ValueError, match=f"{k}.*'pool_h', 'pool_w'"):
        _C.conv2d_maxpool2d_backward(f32(1, 4, 4, 16), None, f32(1, 2, 2, 16), f32(1, 2, 2, 16),
                                     i64, 1, 4, 4, 16, 0, 2, codes.RELU, 0.0)
    with pytest.raises(ValueError, match=f"{k}.*'indices'"):
        _C.conv2d_maxpool2d_backward(f32(1, 4, 4, 16), None, f32(1, 2, 2, 16), f32(1, 2, 2, 16),
                                     i64[:, :1], 1, 4, 4, 16, 2, 2, codes.RELU, 0.0)
    with pytest.raises(ValueError, match=f"{k}.*'dz'"):
        _C.conv2d_maxpool2d_backward(f32(1, 4, 3, 16), None, f32(1, 2, 2, 16), f32(1, 2, 2, 16),
                                     i64, 1, 4, 4, 16, 2, 2, codes.RELU, 0.0)
    c = conv_problem(1, 6, 6, 2, 16, 3, 3)
    with pytest.raises(ValueError, match="conv2d_forward_maxpool2d.*'indices'"):
        _C.conv2d_forward_maxpool2d(f32(1, 2, 2, 16), f32(1, 6, 6, 2), f32(3, 3, 2, 16), None,
                                    *conv_args(c), codes.RELU, 0.0, 2, 2,
                                    np.zeros((1, 2, 2, 16), np.int32))
    with pytest.raises(ValueError, match="leaky_relu"):
        ref.conv2d_maxpool2d_backward(None, None, f32(1, 2, 2, 16), f32(1, 2, 2, 16), i64, 1, 4,
                                      4, 16, 2, 2, codes.TANH, 0.0)
