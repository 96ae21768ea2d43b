"""BatchNormalization + ReLU + MaxPooling2D kernels (batchnorm_relu_maxpool_*): the reference
against NumPy float64 and finite differences; the compiled kernels bit for bit against the
unfused chain (batchnorm_relu_forward_train, maxpool2d_forward, maxpool2d_backward,
batchnorm_relu_backward; its flat indices as window positions) on every ISA, thread count and
with the bf16-products flag on; odd
spatial sizes (rows and columns the pool drops), pool 2 and 3, channel counts off the vector
width, batch 1, ties, non-finite cotangents, bad inputs."""

import numpy as np
import pytest
from fkeras import _C
from fkeras.backend.reference import batchnorm as ref
from kernel_testing import check_vjp, nans, rand

EPS = 1e-3

# (N, H, W, C, pool_h, pool_w)
CASES = [
    (1, 2, 2, 1, 2, 2),
    (1, 5, 7, 3, 2, 2),
    (2, 6, 6, 17, 3, 3),
    (3, 7, 5, 33, 3, 2),
    (2, 9, 8, 5, 2, 3),
    (4, 12, 12, 64, 2, 2),
    (1, 4, 4, 5000, 2, 2),  # C > 4096: the backward's tiles split the channels
    (64, 24, 24, 64, 2, 2),  # the CNN+BN benchmark's second block
]


def _data(rng, case):
    N, H, W, C, _, _ = case
    x = (rng.standard_normal((N, H, W, C)) * 2.0 + 0.5).astype(np.float32)
    gamma = rand(rng, (C,)) + np.float32(1.0)
    beta = rand(rng, (C,))
    return x, gamma, beta


def _pooled(case):
    N, H, W, C, ph, pw = case
    return (N, H // ph, W // pw, C)


def positions(idx, case):
    """maxpool2d_forward's flat indices as window positions (r * pool_w + s), int8."""
    N, H, W, C, ph, pw = case
    _, h, w, _ = np.unravel_index(idx, (N, H, W, C))
    return ((h % ph) * pw + w % pw).astype(np.int8)


def fused(x, gamma, beta, dy, case):
    N, H, W, C, ph, pw = case
    y, idx = nans(_pooled(case)), np.full(_pooled(case), -7, np.int8)
    state = [nans(C) for _ in range(5)]  # var, mean, inv_std, scale, shift
    _C.batchnorm_relu_maxpool_forward_train(y, idx, *state, x, gamma, beta, N, H, W, C, ph, pw,
                                            EPS)
    grads = (nans(x.shape), nans(C), nans(C))
    _C.batchnorm_relu_maxpool_backward(*grads, dy, idx, x, *state[1:], gamma, N, H, W, C, ph, pw)
    return (y, idx, *state), grads


def unfused(x, gamma, beta, dy, case):
    """The chain's own kernels, the full-size activation and cotangent written."""
    N, H, W, C, ph, pw = case
    P, Q = H // ph, W // pw
    full = nans(x.shape)
    state = [nans(C) for _ in range(5)]
    _C.batchnorm_relu_forward_train(full, *state, x, gamma, beta, N * H * W, C, 1, EPS)
    y, idx = nans(_pooled(case)), np.full(_pooled(case), -7, np.int64)
    _C.maxpool2d_forward(y, idx, full, N, H, W, C, P, Q, ph, pw, ph, pw, 0, 0)
    g = nans(x.shape)
    _C.maxpool2d_backward(g, dy, idx, N, H, W, C, P, Q)
    grads = (nans(x.shape), nans(C), nans(C))
    _C.batchnorm_relu_backward(*grads, g, x, *state[1:], gamma, N * H * W, C, 1)
    return (y, positions(idx, case), *state), grads


def reference(x, gamma, beta, dy, case):
    N, H, W, C, ph, pw = case
    y, idx = np.zeros(_pooled(case)), np.zeros(_pooled(case), np.int8)
    state = [np.zeros(C) for _ in range(5)]
    ref.batchnorm_relu_maxpool_forward_train(y, idx, *state, x, gamma, beta, N, H, W, C, ph, pw,
                                             EPS)
    grads = (np.zeros(x.shape), np.zeros(C), np.zeros(C))
    ref.batchnorm_relu_maxpool_backward(*grads, dy, idx, x, *state[1:], gamma, N, H, W, C, ph,
                                        pw)
    return (y, idx, *state), grads


def _numpy_chain(x, gamma, beta, case):
    """relu(bn(x)) max pooled, in float64 NumPy (no kernel)."""
    N, H, W, C, ph, pw = case
    x64 = x.astype(np.float64)
    mu, var = x64.mean(axis=(0, 1, 2)), x64.var(axis=(0, 1, 2))
    z = np.maximum((x64 - mu) / np.sqrt(var + float(np.float32(EPS))) * gamma + beta, 0.0)
    P, Q = H // ph, W // pw
    win = z[:, :P * ph, :Q * pw].reshape(N, P, ph, Q, pw, C)
    return win.max(axis=(2, 4)), mu, var


# ---- the reference -------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES[:5], ids=str)
def test_reference_forward_matches_numpy(case):
    rng = np.random.default_rng(1)
    x, gamma, beta = _data(rng, case)
    (y, idx, var, mean, *_), _ = reference(x, gamma, beta, nans(_pooled(case)), case)
    want, mu, v = _numpy_chain(x, gamma, beta, case)
    np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mean, mu, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(var, v, rtol=1e-12)
    # Each position is that of its window's first maximum.
    N, H, W, C, ph, pw = case
    assert ((idx >= 0) & (idx < ph * pw)).all()
    P, Q = H // ph, W // pw
    mu64, inv = mean.astype(np.float64), 1 / np.sqrt(var + float(np.float32(EPS)))
    z = np.maximum((x - mu64) * inv * gamma + beta, 0.0)[:, :P * ph, :Q * pw]
    win = z.reshape(N, P, ph, Q, pw, C).transpose(0, 1, 3, 2, 4, 5).reshape(N, P, Q, -1, C)
    np.testing.assert_array_equal(idx, np.argmax(win, axis=3))
    if case[0] * case[3] > 4:
        assert (y > 0).any() and (y == 0).any()


@pytest.mark.parametrize("case", [(1, 5, 5, 3, 2, 2), (2, 6, 7, 2, 3, 3)], ids=str)
def test_reference_backward_matches_finite_differences(case):
    rng = np.random.default_rng(2)
    x, gamma, beta = (a.astype(np.float64) for a in _data(rng, case))
    inputs = {"x": x, "gamma": gamma, "beta": beta}

    def f(xs):
        y = np.zeros(_pooled(case))
        ref.batchnorm_relu_maxpool_forward_train(
            y, np.zeros(_pooled(case), np.int8), *(np.zeros(case[3]) for _ in range(5)),
            xs["x"], xs["gamma"], xs["beta"], *case, EPS)
        return {"y": y}

    dy = rng.standard_normal(_pooled(case))
    _, grads = reference(x, gamma, beta, dy, case)
    check_vjp(f, inputs, {"y": dy}, dict(zip(("x", "gamma", "beta"), grads)), rng=rng)


# ---- compiled ------------------------------------------------------------------------------


def _assert_same(got, want):
    names = ("y", "positions", "var", "mean", "inv_std", "scale", "shift", "dx", "dgamma", "dbeta")
    for name, a, b in zip(names, [*got[0], *got[1]], [*want[0], *want[1]]):
        np.testing.assert_array_equal(a, b, err_msg=name)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_compiled_equals_the_unfused_chain_bit_for_bit(isa, case):
    rng = np.random.default_rng(7 + sum(case))
    x, gamma, beta = _data(rng, case)
    dy = rand(rng, _pooled(case))
    got = fused(x, gamma, beta, dy, case)
    _assert_same(got, unfused(x, gamma, beta, dy, case))
    # And the float64 reference, given the compiled forward's pooled values.
    (wy, widx, *_), (wdx, wdg, wdb) = reference(x, gamma, beta, dy, case)
    np.testing.assert_array_equal(got[0][1], widx)
    np.testing.assert_allclose(got[0][0], wy, rtol=1e-5, atol=1e-5)
    scale = float(np.abs(dy).max() * np.abs(gamma).max() * got[0][4].max())
    np.testing.assert_allclose(got[1][0], wdx, rtol=1e-4, atol=1e-5 * scale)
    np.testing.assert_allclose(got[1][1], wdg, rtol=1e-4, atol=1e-5 * max(1, abs(wdg).max()))
    np.testing.assert_allclose(got[1][2], wdb, rtol=1e-4, atol=1e-5 * max(1, abs(wdb).max()))


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("bf16", [False, True])
def test_thread_count_and_bf16_flag_change_nothing(threads, bf16):
    case = (8, 13, 11, 20, 2, 2)
    rng = np.random.default_rng(3)
    x, gamma, beta = _data(rng, case)
    dy = rand(rng, _pooled(case))
    want = unfused(x, gamma, beta, dy, case)
    before = (_C.num_threads(), _C.gemm_bf16())
    try:
        _C.set_num_threads(threads)
        _C.set_gemm_bf16(bf16)
        _assert_same(fused(x, gamma, beta, dy, case), want)
    finally:
        _C.set_num_threads(before[0])
        _C.set_gemm_bf16(before[1])


def test_ties_take_the_first_maximum_and_zeros_gate():
    # gamma 0: every pre-activation is beta; beta <= 0 makes all windows ties at 0 (first
    # index, dy gated off); beta > 0 makes ties at beta (first index, dy passed).
    case = (2, 4, 6, 3, 2, 3)
    rng = np.random.default_rng(4)
    x, _, _ = _data(rng, case)
    gamma = np.zeros(3, np.float32)
    beta = np.array([-1.0, 0.0, 0.5], np.float32)
    dy = rand(rng, _pooled(case))
    got = fused(x, gamma, beta, dy, case)
    _assert_same(got, unfused(x, gamma, beta, dy, case))
    np.testing.assert_array_equal(got[0][1], 0)  # every window a tie: its first element
    want = np.float32(dy[..., 2].astype(np.float64).sum())
    np.testing.assert_array_equal(got[1][2], np.array([0.0, 0.0, want], np.float32))


def test_non_finite_cotangents_propagate_as_in_the_chain():
    case = (2, 6, 6, 4, 2, 2)
    rng = np.random.default_rng(8)
    x, gamma, beta = _data(rng, case)
    dy = rand(rng, _pooled(case))
    y = fused(x, gamma, beta, dy, case)[0][0]
    dy[tuple(np.argwhere(y == 0)[0])] = np.inf  # closed gate: inf * 0 = NaN in the chain
    dy[tuple(np.argwhere(y > 0)[0])] = -np.inf
    got, want = fused(x, gamma, beta, dy, case), unfused(x, gamma, beta, dy, case)
    _assert_same(got, want)
    assert np.isnan(got[1][2]).any()


def test_optional_gamma_beta_and_outputs():
    case = (2, 5, 6, 7, 2, 2)
    rng = np.random.default_rng(5)
    x, _, _ = _data(rng, case)
    dy = rand(rng, _pooled(case))
    got = fused(x, None, None, dy, case)
    _assert_same(got, unfused(x, None, None, dy, case))
    N, H, W, C, ph, pw = case
    state = got[0][3:]
    for i in range(3):
        part = [None, None, None]
        part[i] = nans(got[1][i].shape)
        _C.batchnorm_relu_maxpool_backward(*part, dy, got[0][1], x, *state, None, *case)
        np.testing.assert_array_equal(part[i], got[1][i])


def test_pool_larger_than_the_input_and_empty_batch():
    # H < pool_h: no pooled row; the statistics are still taken.
    x = np.ones((2, 1, 4, 3), np.float32)
    y, idx = nans((2, 0, 2, 3)), np.zeros((2, 0, 2, 3), np.int8)
    state = [nans(3) for _ in range(5)]
    _C.batchnorm_relu_maxpool_forward_train(y, idx, *state, x, None, None, 2, 1, 4, 3, 2, 2,
                                            EPS)
    np.testing.assert_array_equal(state[1], 1.0)
    dx = nans(x.shape)
    _C.batchnorm_relu_maxpool_backward(dx, None, None, y, idx, x, *state[1:], None, 2, 1, 4, 3,
                                       2, 2)
    np.testing.assert_array_equal(dx, 0.0)
    e = np.zeros((0, 4, 4, 3), np.float32)
    _C.batchnorm_relu_maxpool_forward_train(np.zeros((0, 2, 2, 3), np.float32),
                                            np.zeros((0, 2, 2, 3), np.int8), *state, e, None,
                                            None, 0, 4, 4, 3, 2, 2, EPS)
    np.testing.assert_array_equal(state[1], 0.0)


def test_rejects_bad_inputs():
    x = np.ones((1, 4, 4, 3), np.float32)
    c = np.ones(3, np.float32)
    y, idx = np.zeros((1, 2, 2, 3), np.float32), np.zeros((1, 2, 2, 3), np.int8)
    with pytest.raises(ValueError, match="pool_h"):
        _C.batchnorm_relu_maxpool_forward_train(y, idx, c, c, c, c, c, x, None, None, 1, 4, 4, 3,
                                                0, 2, EPS)
    with pytest.raises(ValueError, match="pool_h \\* pool_w <= 128"):
        _C.batchnorm_relu_maxpool_forward_train(y, idx, c, c, c, c, c, x, None, None, 1, 4, 4, 3,
                                                12, 11, EPS)
    with pytest.raises(ValueError, match="positions"):
        _C.batchnorm_relu_maxpool_forward_train(y, idx[:, :1], c, c, c, c, c, x, None, None, 1,
                                                4, 4, 3, 2, 2, EPS)
    with pytest.raises(ValueError, match="epsilon"):
        _C.batchnorm_relu_maxpool_forward_train(y, idx, c, c, c, c, c, x, None, None, 1, 4, 4, 3,
                                                2, 2, -1.0)
    with pytest.raises(ValueError, match="positions"):
        _C.batchnorm_relu_maxpool_backward(x.copy(), None, None, y, idx.astype(np.int64), x, c,
                                           c, c, c, None, 1, 4, 4, 3, 2, 2)
    with pytest.raises(ValueError, match="dy"):
        _C.batchnorm_relu_maxpool_backward(None, None, None, y[:, :1], idx, x, c, c, c, c, None,
                                           1, 4, 4, 3, 2, 2)
