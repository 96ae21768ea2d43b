"""conv2d_forward_maxpool2d (a convolution and a 'valid' max pooling of its output in one pass,
for inference) and maxpool2d_forward without indices, against NumPy float64."""

import numpy as np
import pytest
from fkeras import _C
from fkeras.backend import codes
from fkeras.backend.reference import conv as ref
from kernel_testing import assert_close, nans, rand
from test_conv import conv_args, conv_problem, pool_args, pool_problem, POOL_SWEEP, _pool_id


def numpy_conv(x, w, b, c):
    """The convolution in float64 from its definition: a zero-padded input, one einsum per tap."""
    N, H, W, C, K, G = c["N"], c["H"], c["W"], c["C"], c["K"], c["groups"]
    R, S, P, Q = c["R"], c["S"], c["P"], c["Q"]
    sh, sw, dh, dw = c["stride_h"], c["stride_w"], c["dil_h"], c["dil_w"]
    Hp = max(H + c["pad_top"], (P - 1) * sh + (R - 1) * dh + 1)
    Wp = max(W + c["pad_left"], (Q - 1) * sw + (S - 1) * dw + 1)
    xp = np.zeros((N, Hp, Wp, C))
    xp[:, c["pad_top"]:c["pad_top"] + H, c["pad_left"]:c["pad_left"] + W] = x
    Cg, Kg = C // G, K // G
    y = np.zeros((N, P, Q, K))
    for r in range(R):
        for s in range(S):
            tap = xp[:, r * dh:r * dh + (P - 1) * sh + 1:sh, s * dw:s * dw + (Q - 1) * sw + 1:sw]
            for g in range(G):
                y[..., g * Kg:(g + 1) * Kg] += np.einsum(
                    "npqc,ck->npqk", tap[..., g * Cg:(g + 1) * Cg],
                    w[r, s, :, g * Kg:(g + 1) * Kg].astype(np.float64))
    return y if b is None else y + b


def numpy_act(z, code, alpha):
    if code == codes.LINEAR:
        return z
    if code == codes.RELU:
        return np.maximum(z, 0.0)
    if code == codes.LEAKY_RELU:
        return np.where(z > 0, z, alpha * z)
    if code == codes.SIGMOID:
        return 1.0 / (1.0 + np.exp(-z))
    if code == codes.TANH:
        return np.tanh(z)
    raise AssertionError(code)


def numpy_pool(z, ph, pw):
    N, P, Q, K = z.shape
    Pp, Qp = P // ph, Q // pw
    return z[:, :Pp * ph, :Qp * pw].reshape(N, Pp, ph, Qp, pw, K).max(axis=(2, 4))


def run_fused(c, ph, pw, code=codes.RELU, alpha=0.0, bias=True, seed=0, x=None):
    rng = np.random.default_rng(seed)
    if x is None:
        x = rand(rng, (c["N"], c["H"], c["W"], c["C"]))
    w = rand(rng, (c["R"], c["S"], c["C"] // c["groups"], c["K"]), 0.3)
    b = rand(rng, (c["K"],)) if bias else None
    y = nans((c["N"], c["P"] // ph, c["Q"] // pw, c["K"]))
    _C.conv2d_forward_maxpool2d(y, x, w, b, *conv_args(c), code, alpha, ph, pw)
    want = numpy_pool(numpy_act(numpy_conv(x, w, b, c), code, alpha), ph, pw)
    return y, want, (x, w, b)


@pytest.fixture(params=["gemm", "direct", "auto"])
def conv_path(request, monkeypatch):
    """The fused kernel pools inside the direct convolution and after the convolution on the
    other paths (FKERAS_CONV_DIRECT, read per call: 0 never direct, 1 wherever it applies)."""
    if request.param == "auto":
        monkeypatch.delenv("FKERAS_CONV_DIRECT", raising=False)
    else:
        monkeypatch.setenv("FKERAS_CONV_DIRECT", "0" if request.param == "gemm" else "1")
    return request.param


CASES = [
    # (problem, pool_h, pool_w): the CNN's layer 2 (smaller batch), C = 1, odd output sizes
    # (the last row / column dropped), windows 1x1 .. 3x3 and uneven, strides, 'same' padding,
    # dilation, groups and depthwise (the non-direct paths), K not a multiple of a vector.
    (conv_problem(3, 26, 26, 32, 64, 3, 3), 2, 2),
    (conv_problem(2, 28, 28, 1, 32, 3, 3), 2, 2),
    (conv_problem(2, 9, 12, 3, 16, 3, 3), 2, 2),
    (conv_problem(1, 11, 10, 5, 48, 3, 3, padding="same"), 3, 2),
    (conv_problem(2, 7, 9, 4, 32, 2, 3, padding="same"), 1, 1),
    (conv_problem(1, 8, 30, 2, 80, 3, 3), 2, 3),
    (conv_problem(2, 13, 12, 8, 32, 3, 3, 2, 2, padding="same"), 2, 2),
    (conv_problem(1, 12, 13, 16, 32, 3, 3, 1, 1, 2, 2, "same"), 2, 2),
    (conv_problem(2, 9, 9, 4, 6, 3, 3, groups=2), 2, 2),
    (conv_problem(2, 8, 8, 6, 6, 3, 3, padding="same", groups=6), 2, 2),
    (conv_problem(1, 6, 6, 5, 7, 1, 1), 2, 2),
    (conv_problem(1, 3, 3, 2, 16, 3, 3), 1, 1),
]


@pytest.mark.parametrize("case", CASES, ids=lambda k: f"{k[0]['N']}x{k[0]['H']}x{k[0]['W']}"
                         f"x{k[0]['C']}-{k[0]['K']}_{k[0]['R']}x{k[0]['S']}_s{k[0]['stride_h']}"
                         f"_d{k[0]['dil_h']}_g{k[0]['groups']}_pool{k[1]}x{k[2]}"
                         if isinstance(k, tuple) else str(k))
def test_fused_matches_numpy(case, isa, conv_path):
    c, ph, pw = case
    y, want, _ = run_fused(c, ph, pw, bias=c["K"] % 3 != 1, seed=c["H"] + c["K"])
    assert_close(y, want, rtol=1e-5, atol=2e-4, name="pooled y")


@pytest.mark.parametrize("code,alpha", [(codes.LINEAR, 0.0), (codes.RELU, 0.0),
                                        (codes.LEAKY_RELU, 0.2), (codes.SIGMOID, 0.0),
                                        (codes.TANH, 0.0)])
def test_fused_activations(code, alpha, isa, conv_path):
    # relu and leaky_relu run in the direct kernel's stores, the others after each row.
    c = conv_problem(2, 10, 11, 3, 32, 3, 3, padding="same")
    y, want, _ = run_fused(c, 2, 2, code, alpha, seed=code)
    assert_close(y, want, rtol=1e-5, atol=2e-4, name="pooled y")


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_fused_thread_counts(threads, conv_path):
    # Tasks of whole pooling windows of rows: one per image and several, with a remainder.
    before = _C.num_threads()
    _C.set_num_threads(threads)
    try:
        for c in (conv_problem(5, 15, 9, 3, 32, 3, 3), conv_problem(1, 40, 8, 2, 16, 3, 3)):
            y, want, _ = run_fused(c, 2, 2, seed=threads)
            assert_close(y, want, rtol=1e-5, atol=2e-4, name="pooled y")
    finally:
        _C.set_num_threads(before)


def test_fused_equals_conv_then_pool(isa, conv_path):
    # The same float32 values as conv2d_forward then maxpool2d_forward, NaN included (a NaN
    # input reaches the windows it touches; relu keeps it; the pooling takes it).
    c = conv_problem(2, 12, 14, 4, 32, 3, 3)
    x = rand(np.random.default_rng(5), (2, 12, 14, 4))
    x[1, 6, 3, 2] = np.nan
    y, _, (x, w, b) = run_fused(c, 2, 2, x=x)
    full = nans((2, c["P"], c["Q"], 32))
    _C.conv2d_forward(full, x, w, b, *conv_args(c), codes.RELU, 0.0)
    pooled = nans(y.shape)
    _C.maxpool2d_forward(pooled, None, full, 2, c["P"], c["Q"], 32, y.shape[1], y.shape[2], 2, 2,
                         2, 2, 0, 0)
    np.testing.assert_array_equal(y, pooled)
    assert np.isnan(y).any() and not np.isnan(y).all()


def test_fused_reference_kernel_matches_numpy():
    c, ph, pw = CASES[3]
    rng = np.random.default_rng(1)
    x, w, b = rand(rng, (1, 11, 10, 5)), rand(rng, (3, 3, 5, 48)), rand(rng, (48,))
    y = np.empty((1, c["P"] // ph, c["Q"] // pw, 48))
    ref.conv2d_forward_maxpool2d(y, x, w, b, *conv_args(c), codes.RELU, 0.0, ph, pw)
    want = numpy_pool(np.maximum(numpy_conv(x, w, b, c), 0.0), ph, pw)
    np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12)


def test_fused_rejects_bad_arguments():
    c = conv_problem(1, 6, 6, 2, 16, 3, 3)
    x, w = np.zeros((1, 6, 6, 2), np.float32), np.zeros((3, 3, 2, 16), np.float32)
    with pytest.raises(ValueError, match="conv2d_forward_maxpool2d.*'pool_h', 'pool_w'"):
        _C.conv2d_forward_maxpool2d(np.zeros((1, 4, 4, 16), np.float32), x, w, None,
                                    *conv_args(c), codes.RELU, 0.0, 0, 1)
    with pytest.raises(ValueError, match="conv2d_forward_maxpool2d.*'y'"):  # y is (1, 2, 2, 16)
        _C.conv2d_forward_maxpool2d(np.zeros((1, 4, 4, 16), np.float32), x, w, None,
                                    *conv_args(c), codes.RELU, 0.0, 2, 2)
    with pytest.raises(ValueError, match="conv2d_forward_maxpool2d.*activation"):
        _C.conv2d_forward_maxpool2d(np.zeros((1, 2, 2, 16), np.float32), x, w, None,
                                    *conv_args(c), codes.GELU, 0.0, 2, 2)
    with pytest.raises(ValueError, match="pool_h"):
        ref.conv2d_forward_maxpool2d(np.zeros((1, 2, 2, 16)), x, w, None, *conv_args(c),
                                     codes.RELU, 0.0, 2, 0)


@pytest.mark.parametrize("c", POOL_SWEEP, ids=_pool_id)
def test_maxpool_values_only(c, isa):
    # indices=None (inference): the values of the indexed kernel and of the reference, ties and
    # NaN included, and padding never wins.
    rng = np.random.default_rng(c["W"] * 10 + c["C"])
    xs, ys = (c["N"], c["H"], c["W"], c["C"]), (c["N"], c["P"], c["Q"], c["C"])
    x = rng.integers(-3, 0, size=xs).astype(np.float32)
    x.flat[rng.integers(0, x.size)] = np.nan
    y, y_idx, want = nans(ys), nans(ys), np.empty(ys)
    _C.maxpool2d_forward(y, None, x, *pool_args(c))
    _C.maxpool2d_forward(y_idx, np.empty(ys, np.int64), x, *pool_args(c))
    ref.maxpool2d_forward(want, None, x, *pool_args(c))
    np.testing.assert_array_equal(y, y_idx)
    np.testing.assert_array_equal(y, want.astype(np.float32))


def test_maxpool_values_only_large(isa):
    c = pool_problem(4, 24, 24, 64, 2, 2, 2, 2, "valid")
    x = rand(np.random.default_rng(2), (4, 24, 24, 64))
    y = nans((4, 12, 12, 64))
    _C.maxpool2d_forward(y, None, x, *pool_args(c))
    np.testing.assert_array_equal(y, x.reshape(4, 12, 2, 12, 2, 64).max(axis=(2, 4)))
