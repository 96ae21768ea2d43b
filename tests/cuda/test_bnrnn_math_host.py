"""The per-element math of the CUDA batch-norm and recurrent kernels, run on the CPU.

`fkeras._C_cuda_host` compiles `fk_cuda/batchnorm_math.h` and `fk_cuda/rnn_math.h` (the code the
GPU kernels call) with the host compiler. Cell steps are assembled here from those gate
functions plus NumPy matmuls and compared with the CPU kernels `fkeras._C.*_cell_*` and with
NumPy float64; batch norm runs the GPU's reduction structure (chunks, tree, Welford) against
`fkeras._C.batchnorm_*`, float64 NumPy and finite differences.
"""

import numpy as np
import pytest

H = pytest.importorskip("fkeras._C_cuda_host")
C = pytest.importorskip("fkeras._C")

LINEAR, RELU, SIGMOID, TANH, HARD_SIGMOID = 0, 1, 2, 3, 11
ACT_PAIRS = [(TANH, SIGMOID), (RELU, HARD_SIGMOID), (LINEAR, TANH), (SIGMOID, RELU)]


def np_act(x, code):
    x = np.asarray(x, np.float64)
    if code == RELU:
        return np.maximum(x, 0.0)
    if code == SIGMOID:
        return 1.0 / (1.0 + np.exp(-x))
    if code == TANH:
        return np.tanh(x)
    if code == HARD_SIGMOID:
        return np.clip(x + 3.0, 0.0, 6.0) / 6.0
    return x


def np_dact_from_y(y, code):
    if code == RELU:
        return (y > 0).astype(np.float64)
    if code == SIGMOID:
        return y * (1 - y)
    if code == TANH:
        return 1 - y * y
    if code == HARD_SIGMOID:
        return np.where((y > 0) & (y < 1), 1 / 6, 0.0)
    return np.ones_like(y)


def f32(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def nan(*shape):
    return np.full(shape, np.nan, np.float32)


# ---------------------------------------------------------------- activations


@pytest.mark.parametrize("code", [LINEAR, RELU, SIGMOID, TANH, HARD_SIGMOID])
def test_activation_and_derivative_match_float64(code):
    x = np.linspace(-12, 12, 2001, dtype=np.float32)
    y = H.rnn_act(x, code)
    np.testing.assert_allclose(y, np_act(x, code), rtol=2e-6, atol=2e-7)
    ref_d = np_dact_from_y(np_act(x, code), code)
    np.testing.assert_allclose(H.rnn_dact(y, code), ref_d, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("code", [RELU, SIGMOID, TANH, HARD_SIGMOID])
def test_activation_special_values(code):
    x = np.array([np.nan, np.inf, -np.inf], np.float32)
    with np.errstate(all="ignore"):
        ref = np_act(x.astype(np.float64), code)
    np.testing.assert_array_equal(H.rnn_act(x, code), ref.astype(np.float32))


# ---------------------------------------------------------------- LSTM


def lstm_cell_inputs(rng, N, F, U):
    return dict(x=f32(rng, N, F), h=f32(rng, N, U), c=f32(rng, N, U), k=f32(rng, F, 4 * U, scale=0.5),
                rk=f32(rng, U, 4 * U, scale=0.5), b=f32(rng, 4 * U, scale=0.3))


@pytest.mark.parametrize("a, ra", ACT_PAIRS)
@pytest.mark.parametrize("N, F, U", [(1, 1, 1), (3, 7, 5), (33, 4, 17)])
def test_lstm_step_matches_cpu_kernel(N, F, U, a, ra):
    rng = np.random.default_rng(N * 100 + U)
    p = lstm_cell_inputs(rng, N, F, U)
    z64 = p["x"].astype(np.float64) @ p["k"] + p["h"].astype(np.float64) @ p["rk"] + p["b"]
    gates, c, h = H.lstm_gates_forward(z64.astype(np.float32), p["c"], a, ra)
    # NumPy float64 reference of the step.
    zi, zf, zc, zo = np.split(z64, 4, axis=1)
    i, f, g, o = np_act(zi, ra), np_act(zf, ra), np_act(zc, a), np_act(zo, ra)
    c64 = f * p["c"] + i * g
    np.testing.assert_allclose(c, c64, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(h, o * np_act(c64, a), rtol=1e-5, atol=1e-5)
    # The CPU kernel.
    hc, cc, gc = nan(N, U), nan(N, U), nan(N, 4 * U)
    C.lstm_cell_forward(hc, cc, gc, p["x"], p["h"], p["c"], p["k"], p["rk"], p["b"], N, F, U, a, ra)
    np.testing.assert_allclose(gates, gc, rtol=1e-5, atol=2e-6)
    np.testing.assert_allclose(c, cc, rtol=1e-5, atol=2e-6)
    np.testing.assert_allclose(h, hc, rtol=1e-5, atol=2e-6)

    # Backward: the gate gradients, then the GEMMs a cell backward does.
    dh, dcn = f32(rng, N, U), f32(rng, N, U)
    dz, dcp = H.lstm_gates_backward(dh, dcn, gc, cc, p["c"], a, ra)
    dz64 = dz.astype(np.float64)
    outs = dict(dx=nan(N, F), dh_prev=nan(N, U), dc_prev=nan(N, U), dk=nan(F, 4 * U),
                drk=nan(U, 4 * U), db=nan(4 * U))
    C.lstm_cell_backward(*outs.values(), dh, dcn, gc, cc, p["x"], p["h"], p["c"], p["k"], p["rk"],
                         N, F, U, a, ra)
    tol = dict(rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(dcp, outs["dc_prev"], **tol)
    np.testing.assert_allclose(dz64 @ p["k"].T, outs["dx"], **tol)
    np.testing.assert_allclose(dz64 @ p["rk"].T, outs["dh_prev"], **tol)
    np.testing.assert_allclose(p["x"].T.astype(np.float64) @ dz64, outs["dk"], **tol)
    np.testing.assert_allclose(p["h"].T.astype(np.float64) @ dz64, outs["drk"], **tol)
    np.testing.assert_allclose(dz64.sum(0), outs["db"], **tol)


def test_lstm_gate_backward_matches_finite_differences():
    rng = np.random.default_rng(1)
    N, U = 4, 3
    z, cp = f32(rng, N, 4 * U), f32(rng, N, U)
    dh, dc = f32(rng, N, U), f32(rng, N, U)
    gates, c, _ = H.lstm_gates_forward(z, cp, TANH, SIGMOID)
    dz, dcp = H.lstm_gates_backward(dh, dc, gates, c, cp, TANH, SIGMOID)

    def loss(z64, cp64):
        zi, zf, zc, zo = np.split(z64, 4, axis=1)
        cn = np_act(zf, SIGMOID) * cp64 + np_act(zi, SIGMOID) * np.tanh(zc)
        return np.sum(dh * np_act(zo, SIGMOID) * np.tanh(cn)) + np.sum(dc * cn)

    eps = 1e-6
    z64, cp64 = z.astype(np.float64), cp.astype(np.float64)
    for idx in [(0, 0), (1, U + 1), (2, 2 * U + 2), (3, 3 * U)]:
        e = np.zeros_like(z64)
        e[idx] = eps
        fd = (loss(z64 + e, cp64) - loss(z64 - e, cp64)) / (2 * eps)
        assert dz[idx] == pytest.approx(fd, rel=1e-4, abs=1e-5)
    e = np.zeros_like(cp64)
    e[1, 2] = eps
    fd = (loss(z64, cp64 + e) - loss(z64, cp64 - e)) / (2 * eps)
    assert dcp[1, 2] == pytest.approx(fd, rel=1e-4, abs=1e-5)


# ---------------------------------------------------------------- GRU


def gru_inputs(rng, N, F, U, reset_after):
    bias = f32(rng, 2, 3 * U, scale=0.3) if reset_after else f32(rng, 3 * U, scale=0.3)
    return dict(x=f32(rng, N, F), h=f32(rng, N, U), k=f32(rng, F, 3 * U, scale=0.5),
                rk=f32(rng, U, 3 * U, scale=0.5), b=bias)


def gru_step_host(p, a, ra, reset_after):
    """One GRU step from the host gate math and float64 matmuls: (h, gates, hproj, parts)."""
    x64, h64 = p["x"].astype(np.float64), p["h"].astype(np.float64)
    U = p["h"].shape[1]
    if reset_after:
        xp = (x64 @ p["k"] + p["b"][0]).astype(np.float32)
        rp = (h64 @ p["rk"] + p["b"][1]).astype(np.float32)
        gates, hproj, h = H.gru_gates_forward(xp, rp, p["h"], a, ra)
        return h, gates, hproj
    xp = (x64 @ p["k"] + p["b"]).astype(np.float32)
    rp = (h64 @ p["rk"][:, : 2 * U]).astype(np.float32)
    z, r, rh = H.gru_gates_forward_zr(xp, rp, p["h"], ra)
    hproj = (rh.astype(np.float64) @ p["rk"][:, 2 * U:]).astype(np.float32)
    hh, h = H.gru_gates_forward_h(np.ascontiguousarray(xp[:, 2 * U:]), hproj, z, p["h"], a)
    return h, np.concatenate([z, r, hh], axis=1), hproj


@pytest.mark.parametrize("reset_after", [True, False])
@pytest.mark.parametrize("a, ra", ACT_PAIRS)
@pytest.mark.parametrize("N, F, U", [(1, 1, 1), (5, 3, 7), (33, 6, 4)])
def test_gru_step_matches_cpu_kernel(N, F, U, a, ra, reset_after):
    rng = np.random.default_rng(N + 10 * U + reset_after)
    p = gru_inputs(rng, N, F, U, reset_after)
    h, gates, hproj = gru_step_host(p, a, ra, reset_after)
    hc, gc, hpc = nan(N, U), nan(N, 3 * U), nan(N, U)
    C.gru_cell_forward(hc, gc, hpc, p["x"], p["h"], p["k"], p["rk"], p["b"], N, F, U, reset_after,
                       a, ra)
    tol = dict(rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(h, hc, **tol)
    np.testing.assert_allclose(gates, gc, **tol)
    np.testing.assert_allclose(hproj, hpc, **tol)

    dh = f32(rng, N, U)
    K, RK = p["k"].astype(np.float64), p["rk"].astype(np.float64)
    h64 = p["h"].astype(np.float64)
    if reset_after:
        dxp, drp, dh_direct = H.gru_gates_backward(dh, gc, hpc, p["h"], a, ra)
        dxp64, drp64 = dxp.astype(np.float64), drp.astype(np.float64)
        dx, dh_prev = dxp64 @ K.T, dh_direct + drp64 @ RK.T
        dk, drk = p["x"].T @ dxp64, h64.T @ drp64
        db = np.stack([dxp64.sum(0), drp64.sum(0)])
    else:
        dz, dhh, dh_direct = H.gru_gates_backward_zh(dh, gc, p["h"], a, ra)
        drh = (dhh.astype(np.float64) @ RK[:, 2 * U:].T).astype(np.float32)
        dr, dh_part = H.gru_gates_backward_r(drh, np.ascontiguousarray(gc[:, U:2 * U]), p["h"],
                                             dh_direct, ra)
        dxp64 = np.concatenate([dz, dr, dhh], axis=1).astype(np.float64)
        dzr = dxp64[:, : 2 * U]
        dx = dxp64 @ K.T
        dh_prev = dh_part + dzr @ RK[:, : 2 * U].T
        dk = p["x"].T @ dxp64
        rh = gc[:, U:2 * U].astype(np.float64) * h64
        drk = np.concatenate([h64.T @ dzr, rh.T @ dhh.astype(np.float64)], axis=1)
        db = dxp64.sum(0)
    outs = dict(dx=nan(N, F), dh_prev=nan(N, U), dk=nan(F, 3 * U), drk=nan(U, 3 * U),
                db=nan(*p["b"].shape))
    C.gru_cell_backward(*outs.values(), dh, gc, hpc, p["x"], p["h"], p["k"], p["rk"], N, F, U,
                        reset_after, a, ra)
    tol = dict(rtol=5e-5, atol=5e-5)
    for got, key in [(dx, "dx"), (dh_prev, "dh_prev"), (dk, "dk"), (drk, "drk"), (db, "db")]:
        np.testing.assert_allclose(got, outs[key], **tol, err_msg=key)


def test_gru_infinite_candidate_gives_infinite_state():
    g, _, h = H.gru_gates_forward(np.array([[0, 0, np.inf]], np.float32),
                                  np.zeros((1, 3), np.float32), np.zeros((1, 1), np.float32),
                                  LINEAR, SIGMOID)
    assert h[0, 0] == np.inf and g[0, 2] == np.inf


# ---------------------------------------------------------------- SimpleRNN


@pytest.mark.parametrize("a", [LINEAR, RELU, SIGMOID, TANH, HARD_SIGMOID])
def test_simple_rnn_step_matches_cpu_kernel(a):
    rng = np.random.default_rng(a)
    N, F, U = 7, 5, 33
    x, hp = f32(rng, N, F), f32(rng, N, U)
    k, rk, b = f32(rng, F, U, scale=0.5), f32(rng, U, U, scale=0.3), f32(rng, U)
    z = (x.astype(np.float64) @ k + hp.astype(np.float64) @ rk + b).astype(np.float32)
    h = H.rnn_act(z, a)
    hc = nan(N, U)
    C.simple_rnn_cell_forward(hc, x, hp, k, rk, b, N, F, U, a)
    np.testing.assert_allclose(h, hc, rtol=2e-5, atol=2e-6)
    dh = f32(rng, N, U)
    dz = H.simple_rnn_gates_backward(dh, hc, a).astype(np.float64)
    outs = [nan(N, F), nan(N, U), nan(F, U), nan(U, U), nan(U)]
    C.simple_rnn_cell_backward(*outs, dh, hc, x, hp, k, rk, N, F, U, a)
    refs = [dz @ k.T, dz @ rk.T, x.T @ dz, hp.T @ dz, dz.sum(0)]
    for got, ref in zip(outs, refs):
        np.testing.assert_allclose(got, ref, rtol=2e-5, atol=2e-5)


def test_gate_wrappers_reject_wrong_shapes():
    with pytest.raises(ValueError, match="lstm_gates_forward: z must be 2-D with 8 columns"):
        H.lstm_gates_forward(np.zeros((2, 7), np.float32), np.zeros((2, 2), np.float32), 3, 2)


# ---------------------------------------------------------------- Welford


def welford_of(x):
    return H.bn_welford(np.asarray(x, np.float64))


def test_welford_merge_is_order_independent_and_exact():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1000) * 1e-2 + 1e4
    parts = np.split(x, [1, 7, 40, 333, 334, 999])
    states = [welford_of(p) for p in parts]
    left = states[0]
    for s in states[1:]:
        left = H.bn_welford_merge(left, s)
    right = states[-1]
    for s in reversed(states[:-1]):
        right = H.bn_welford_merge(s, right)
    m_l, v_l = H.bn_welford_mean_var(left)
    m_r, v_r = H.bn_welford_mean_var(right)
    assert m_l == pytest.approx(x.mean(), rel=1e-15)
    assert v_l == pytest.approx(x.var(), rel=1e-10)
    assert m_r == pytest.approx(m_l, rel=1e-15) and v_r == pytest.approx(v_l, rel=1e-10)
    assert left[0] == 1000 and left[3] == pytest.approx(x.sum(), rel=1e-15)


def test_welford_merge_with_empty_side_and_infinity():
    s = welford_of([1.0, 2.0, 4.0])
    empty = welford_of([])
    assert H.bn_welford_merge(s, empty) == s and H.bn_welford_merge(empty, s) == s
    assert H.bn_welford_mean_var(empty) == (0.0, 0.0)
    m, v = H.bn_welford_mean_var(welford_of([1.0, np.inf, 2.0]))
    assert m == np.inf and np.isnan(v)


@pytest.mark.parametrize("n, C_", [(0, 3), (1, 1), (7, 2), (1000, 1), (10**6, 64), (10**7, 1)])
def test_stats_chunks_cover_every_element(n, C_):
    k = H.bn_stats_chunks(n, C_)
    length = H.bn_chunk_len(n, k)
    assert 1 <= k <= 65535 and k * length >= n and (k - 1) * length < max(n, 1)


# ---------------------------------------------------------------- batch norm


def np_bn_train(x, gamma, beta, eps):
    x = x.astype(np.float64)
    mean = x.mean(axis=(0, 2), keepdims=True)
    var = x.var(axis=(0, 2), keepdims=True)
    g = 1.0 if gamma is None else gamma.astype(np.float64)[None, :, None]
    b = 0.0 if beta is None else beta.astype(np.float64)[None, :, None]
    return (x - mean) / np.sqrt(var + eps) * g + b, mean.ravel(), var.ravel()


SHAPES = [(1, 1, 1), (7, 3, 1), (2, 5, 33), (1000, 7, 1), (3, 33, 17), (5, 2, 1000)]


@pytest.mark.parametrize("with_affine", [True, False])
@pytest.mark.parametrize("outer, C_, inner", SHAPES)
def test_bn_forward_train_matches_cpu_and_float64(outer, C_, inner, with_affine):
    rng = np.random.default_rng(outer + C_ + inner)
    x = f32(rng, outer, C_, inner, scale=3.0) + 2.0
    gamma = f32(rng, C_) if with_affine else None
    beta = f32(rng, C_) if with_affine else None
    eps = 1e-3
    y, var, mean, inv = H.bn_forward_train_emulated(x, gamma, beta, outer, C_, inner, eps)
    ref, m64, v64 = np_bn_train(x, gamma, beta, eps)
    np.testing.assert_allclose(mean, m64, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(var, v64, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(y.reshape(x.shape), ref, rtol=1e-5, atol=1e-5)
    cy, cv, cm, ci = nan(*x.shape), nan(C_), nan(C_), nan(C_)
    C.batchnorm_forward_train(cy, cv, cm, ci, x, gamma, beta, outer, C_, inner, eps)
    np.testing.assert_allclose(mean, cm, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(var, cv, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(inv, ci, rtol=1e-6)
    np.testing.assert_allclose(y.reshape(x.shape), cy, rtol=1e-5, atol=1e-5)
    yi = H.bn_forward_infer_emulated(x, cm, cv, gamma, beta, outer, C_, inner, eps)
    ci_y = nan(*x.shape)
    C.batchnorm_forward_infer(ci_y, x, cm, cv, gamma, beta, outer, C_, inner, eps)
    np.testing.assert_allclose(yi.reshape(x.shape), ci_y, rtol=1e-6, atol=1e-6)


def test_bn_badly_scaled_channel_matches_float64():
    rng = np.random.default_rng(5)
    x = (1e4 + 1e-2 * rng.standard_normal((4000, 2, 1))).astype(np.float32)
    y, var, mean, _ = H.bn_forward_train_emulated(x, None, None, 4000, 2, 1, 0.0)
    ref, m64, v64 = np_bn_train(x, None, None, 0.0)
    np.testing.assert_allclose(var, v64, rtol=1e-5)
    np.testing.assert_allclose(mean, m64, rtol=1e-7)
    np.testing.assert_allclose(y.reshape(x.shape), ref, rtol=1e-3, atol=1e-3)
    assert abs(float(y.std()) - 1.0) < 1e-3


@pytest.mark.parametrize("outer, C_, inner", SHAPES)
def test_bn_backward_matches_cpu_kernel(outer, C_, inner):
    rng = np.random.default_rng(outer * C_ + inner)
    x, dy = f32(rng, outer, C_, inner) + 1.0, f32(rng, outer, C_, inner)
    gamma = f32(rng, C_)
    _, var, mean, inv = H.bn_forward_train_emulated(x, gamma, None, outer, C_, inner, 1e-3)
    dx, dg, db = H.bn_backward_emulated(dy, x, mean, inv, gamma, outer, C_, inner)
    cdx, cdg, cdb = nan(*x.shape), nan(C_), nan(C_)
    C.batchnorm_backward(cdx, cdg, cdb, dy, x, mean, inv, gamma, outer, C_, inner)
    np.testing.assert_allclose(dg, cdg, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(db, cdb, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dx.reshape(x.shape), cdx, rtol=1e-4, atol=1e-5)


def test_bn_backward_matches_finite_differences():
    rng = np.random.default_rng(9)
    outer, C_, inner, eps = 6, 3, 5, 1e-3
    x, w = f32(rng, outer, C_, inner), f32(rng, outer, C_, inner)
    gamma, beta = f32(rng, C_), f32(rng, C_)

    def loss(xv, gv, bv):
        y, _, _ = np_bn_train(xv, gv, bv, eps)
        return float(np.sum(y * w))

    _, _, mean, inv = H.bn_forward_train_emulated(x, gamma, beta, outer, C_, inner, eps)
    dx, dg, db = H.bn_backward_emulated(w, x, mean, inv, gamma, outer, C_, inner)
    dx = dx.reshape(x.shape)
    h = 1e-6
    x64, g64, b64 = x.astype(np.float64), gamma.astype(np.float64), beta.astype(np.float64)
    for idx in [(0, 0, 0), (3, 1, 2), (5, 2, 4)]:
        e = np.zeros_like(x64)
        e[idx] = h
        fd = (loss(x64 + e, g64, b64) - loss(x64 - e, g64, b64)) / (2 * h)
        assert dx[idx] == pytest.approx(fd, rel=1e-3, abs=1e-4)
    for c in range(C_):
        e = np.zeros_like(g64)
        e[c] = h
        assert dg[c] == pytest.approx((loss(x64, g64 + e, b64) - loss(x64, g64 - e, b64)) / (2 * h),
                                      rel=1e-3, abs=1e-4)
        assert db[c] == pytest.approx((loss(x64, g64, b64 + e) - loss(x64, g64, b64 - e)) / (2 * h),
                                      rel=1e-3, abs=1e-4)


@pytest.mark.parametrize("special", [np.nan, np.inf, -np.inf])
def test_bn_special_values_propagate_as_cpu(special):
    rng = np.random.default_rng(2)
    outer, C_, inner = 9, 3, 4
    x, dy = f32(rng, outer, C_, inner), f32(rng, outer, C_, inner)
    x[2, 1, 3] = special
    gamma, beta = f32(rng, C_), f32(rng, C_)
    y, var, mean, inv = H.bn_forward_train_emulated(x, gamma, beta, outer, C_, inner, 1e-3)
    cy, cv, cm, ci = nan(*x.shape), nan(C_), nan(C_), nan(C_)
    with np.errstate(all="ignore"):
        C.batchnorm_forward_train(cy, cv, cm, ci, x, gamma, beta, outer, C_, inner, 1e-3)
    np.testing.assert_array_equal(np.isnan(mean), np.isnan(cm))
    np.testing.assert_array_equal(mean[~np.isfinite(mean)], cm[~np.isfinite(cm)])
    np.testing.assert_array_equal(np.isnan(var), np.isnan(cv))
    np.testing.assert_array_equal(np.isnan(y.reshape(x.shape)), np.isnan(cy))
    dy[4, 0, 1] = special
    dx, dg, db = H.bn_backward_emulated(dy, x, cm, ci, gamma, outer, C_, inner)
    cdx, cdg, cdb = nan(*x.shape), nan(C_), nan(C_)
    C.batchnorm_backward(cdx, cdg, cdb, dy, x, cm, ci, gamma, outer, C_, inner)
    np.testing.assert_array_equal(np.isnan(dg), np.isnan(cdg))
    np.testing.assert_array_equal(db[np.isinf(db)], cdb[np.isinf(cdb)])
    np.testing.assert_array_equal(np.isnan(dx.reshape(x.shape)), np.isnan(cdx))
