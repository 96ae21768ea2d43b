"""attention_forward / attention_backward (cpp/attention/): values against a float64 NumPy
reference written here (full softmax, independent of the kernels' online softmax), the
backward against finite differences and that reference, the dropout factors against the
dropout_forward kernel, every ISA path, thread counts, and the bindings' argument checks."""

import numpy as np
import pytest

from fkeras import _C
from fkeras.backend.reference import KERNELS as REF
from kernel_testing import assert_close, check_vjp, nans, rand


def dense_reference(q, k, v, vis, z, scale):
    """(out, lse, p) in float64: q (N, Tq, H, D), k (N, Tk, Hkv, D), vis/z (N, H, Tq, Tk)."""
    group = q.shape[2] // k.shape[2]
    kh, vh = np.repeat(k, group, axis=2), np.repeat(v, group, axis=2)
    s = np.einsum("nihd,njhd->nhij", q, kh) * scale
    s = np.where(vis, s, -np.inf)
    empty = ~vis.any(-1, keepdims=True)
    m = np.where(empty, 0.0, s.max(-1, keepdims=True))
    e = np.exp(s - m)
    total = e.sum(-1, keepdims=True)
    p = np.where(empty, 1.0 / s.shape[-1], e / np.where(empty, 1.0, total))
    out = np.einsum("nhij,njhd->nihd", p * z, vh)
    lse = np.where(empty, -np.inf, m + np.log(np.where(empty, 1.0, total)))[..., 0]
    return out, lse, p


def make_case(rng, N, Tq, Tk, H, Hkv, D, Dv, mask_kind, causal):
    q, k, v = rand(rng, (N, Tq, H, D)), rand(rng, (N, Tk, Hkv, D)), rand(rng, (N, Tk, Hkv, Dv))
    mask, mb, mh = None, 1, 1
    if mask_kind == "padding":            # (N, 1, 1, Tk): key padding, broadcast over rows
        lengths = rng.integers(1, Tk + 1, N)
        mask = np.broadcast_to((np.arange(Tk)[None] < lengths[:, None])[:, None, None],
                               (N, 1, Tq, Tk)).copy()
        mb = N
    elif mask_kind == "random":           # (1, H, Tq, Tk), some rows fully masked
        mask = rng.random((1, H, Tq, Tk)) < 0.6
        mask[0, 0, Tq // 2] = False
        mh = H
    vis = np.ones((N, H, Tq, Tk), bool)
    if mask is not None:
        vis &= mask
    if causal:
        vis &= np.tri(Tq, Tk, dtype=bool)
    return q, k, v, mask, mb, mh, vis


def run_forward(q, k, v, mask, mb, mh, causal, scale, rate=0.0, seed=0):
    N, Tq, H, D = q.shape
    _, Tk, Hkv, Dv = v.shape
    out, lse = nans((N, Tq, H, Dv)), nans((N, H, Tq))
    _C.attention_forward(out, lse, q, k, v, mask, N, Tq, Tk, H, Hkv, D, Dv, mb, mh, causal,
                         scale, rate, seed)
    return out, lse


def run_backward(g, q, k, v, out, lse, mask, mb, mh, causal, scale, rate=0.0, seed=0):
    N, Tq, H, D = q.shape
    _, Tk, Hkv, Dv = v.shape
    dq, dk, dv = nans(q.shape), nans(k.shape), nans(v.shape)
    _C.attention_backward(dq, dk, dv, g, q, k, v, out, lse, mask, N, Tq, Tk, H, Hkv, D, Dv,
                          mb, mh, causal, scale, rate, seed)
    return dq, dk, dv


def _assert_lse(lse, want):
    assert np.array_equal(np.isneginf(lse), np.isneginf(want))
    fin = np.isfinite(want)
    assert_close(lse[fin], want[fin], rtol=1e-5, atol=1e-5, name="lse")


@pytest.mark.parametrize("T", [1, 7, 33, 128, 1000])
@pytest.mark.parametrize("D", [8, 64])
@pytest.mark.parametrize("mask_kind,causal", [(None, False), (None, True), ("padding", False),
                                              ("random", True)])
def test_forward_matches_float64_reference(T, D, mask_kind, causal, isa):
    rng = np.random.default_rng(T * 100 + D)
    N, H = (1, 2) if T == 1000 else (2, 3)
    q, k, v, mask, mb, mh, vis = make_case(rng, N, T, T, H, 1 if H == 3 else H, D, D,
                                           mask_kind, causal)
    scale = 1.0 / np.sqrt(D)
    out, lse = run_forward(q, k, v, mask, mb, mh, causal, scale)
    want, want_lse, _ = dense_reference(*(a.astype(np.float64) for a in (q, k, v)), vis, 1.0,
                                        np.float64(np.float32(scale)))
    assert_close(out, want, rtol=2e-5, atol=2e-6)
    _assert_lse(lse, want_lse)


@pytest.mark.parametrize("Tq,Tk,H,Hkv,D,Dv", [(7, 7, 2, 2, 8, 8), (33, 70, 4, 2, 64, 16),
                                               (128, 128, 2, 1, 64, 64), (65, 3, 1, 1, 5, 9)])
@pytest.mark.parametrize("mask_kind,causal", [(None, False), (None, True), ("padding", True),
                                              ("random", False)])
@pytest.mark.parametrize("rate", [0.0, 0.3])
def test_backward_matches_float64_reference(Tq, Tk, H, Hkv, D, Dv, mask_kind, causal, rate,
                                            isa):
    rng = np.random.default_rng(Tq + Tk + D)
    q, k, v, mask, mb, mh, vis = make_case(rng, 2, Tq, Tk, H, Hkv, D, Dv, mask_kind, causal)
    scale, seed = 0.3, 1234
    out, lse = run_forward(q, k, v, mask, mb, mh, causal, scale, rate, seed)
    g = rand(rng, out.shape)
    dq, dk, dv = run_backward(g, q, k, v, out, lse, mask, mb, mh, causal, scale, rate, seed)
    want = {n: np.zeros(a.shape) for n, a in (("dq", q), ("dk", k), ("dv", v))}
    REF["attention_backward"](want["dq"], want["dk"], want["dv"], g, q, k, v, out, lse, mask,
                              2, Tq, Tk, H, Hkv, D, Dv, mb, mh, causal, scale, rate, seed)
    for name, got in (("dq", dq), ("dk", dk), ("dv", dv)):
        assert_close(got, want[name], rtol=1e-4, atol=2e-5, name=name)


@pytest.mark.parametrize("mask_kind,causal,rate,Hkv", [(None, False, 0.0, 2), (None, True, 0.0, 1),
                                                      ("random", False, 0.4, 2),
                                                      ("padding", True, 0.2, 1)])
def test_reference_backward_matches_finite_differences(mask_kind, causal, rate, Hkv):
    """The float64 reference backward (the spec the kernel is checked against) is the
    derivative of the reference forward, for a random cotangent."""
    rng = np.random.default_rng(5)
    N, Tq, Tk, H, D, Dv = 2, 5, 6, 2, 3, 4
    q, k, v, mask, mb, mh, _ = make_case(rng, N, Tq, Tk, H, Hkv, D, Dv, mask_kind, causal)
    sizes = (N, Tq, Tk, H, Hkv, D, Dv, mb, mh, causal, 0.7, rate, 99)

    def f(x):
        out, lse = np.zeros((N, Tq, H, Dv)), np.zeros((N, H, Tq))
        REF["attention_forward"](out, lse, x["q"], x["k"], x["v"], mask, *sizes)
        return {"out": out}

    x = {"q": q.astype(np.float64), "k": k.astype(np.float64), "v": v.astype(np.float64)}
    g = rng.standard_normal((N, Tq, H, Dv))
    out = f(x)["out"]
    grads = {n: np.zeros(a.shape) for n, a in x.items()}
    REF["attention_backward"](grads["q"], grads["k"], grads["v"], g, x["q"], x["k"], x["v"],
                              out, None, mask, *sizes)
    check_vjp(f, x, {"out": g}, grads, rng=rng)


def test_kernel_backward_matches_finite_differences_of_the_kernel():
    """The compiled backward against central differences of the compiled forward (float32:
    a loose tolerance, a large step)."""
    rng = np.random.default_rng(8)
    q, k, v, mask, mb, mh, _ = make_case(rng, 1, 9, 11, 2, 1, 4, 3, "random", True)
    g = rand(rng, (1, 9, 2, 3))
    out, lse = run_forward(q, k, v, mask, mb, mh, True, 0.5)
    dq, dk, dv = run_backward(g, q, k, v, out, lse, mask, mb, mh, True, 0.5)
    for name, grad in (("q", dq), ("k", dk), ("v", dv)):
        x = {"q": q, "k": k, "v": v}
        d = rng.standard_normal(x[name].shape).astype(np.float32)
        eps = 1e-2
        plus = dict(x, **{name: x[name] + eps * d})
        minus = dict(x, **{name: x[name] - eps * d})
        lp = np.sum(run_forward(plus["q"], plus["k"], plus["v"], mask, mb, mh, True, 0.5)[0]
                    .astype(np.float64) * g)
        lm = np.sum(run_forward(minus["q"], minus["k"], minus["v"], mask, mb, mh, True, 0.5)[0]
                    .astype(np.float64) * g)
        numeric = (lp - lm) / (2 * eps)
        analytic = float(np.sum(grad.astype(np.float64) * d))
        assert abs(numeric - analytic) <= 2e-3 * max(1.0, abs(analytic)), (name, numeric,
                                                                            analytic)


@pytest.mark.parametrize("rate,seed", [(0.1, 7), (0.5, -3), (0.9, 2**40)])
def test_dropout_factors_are_the_dropout_kernels_mask(rate, seed, isa):
    """The kernel's dropout on the weights equals dropout_forward's mask, drawn over the
    (N, heads, Tq, Tk) probabilities with the same seed, applied to the softmax."""
    rng = np.random.default_rng(3)
    N, Tq, Tk, H, D = 2, 70, 67, 2, 8
    q, k, v, mask, mb, mh, vis = make_case(rng, N, Tq, Tk, H, H, D, D, "random", True)
    n = N * H * Tq * Tk
    ones, dropped, drop_mask = np.ones(n, np.float32), nans(n), nans(n)
    _C.dropout_forward(dropped, drop_mask, ones, n, rate, seed)
    z = drop_mask.astype(np.float64).reshape(N, H, Tq, Tk)
    out, _ = run_forward(q, k, v, mask, mb, mh, True, 0.4, rate, seed)
    want, _, _ = dense_reference(*(a.astype(np.float64) for a in (q, k, v)), vis, z,
                                 np.float64(np.float32(0.4)))
    assert_close(out, want, rtol=2e-5, atol=2e-5)


def test_row_without_a_visible_key_averages_every_value():
    rng = np.random.default_rng(4)
    q, k, v = rand(rng, (1, 3, 1, 4)), rand(rng, (1, 5, 1, 4)), rand(rng, (1, 5, 1, 2))
    mask = np.ones((1, 1, 3, 5), bool)
    mask[0, 0, 1] = False
    out, lse = run_forward(q, k, v, mask, 1, 1, False, 1.0)
    assert_close(out[0, 1, 0], v[0, :, 0].astype(np.float64).mean(0), rtol=1e-6, atol=1e-6)
    assert np.isneginf(lse[0, 0, 1]) and np.isfinite(lse[0, 0, [0, 2]]).all()
    dq, dk, dv = run_backward(np.ones_like(out), q, k, v, out, lse, mask, 1, 1, False, 1.0)
    assert (dq[0, 1] == 0).all()


def _isa_results(isa_name, case):
    before = _C.cpu_isa()
    _C.set_cpu_isa(isa_name)
    try:
        q, k, v, mask, mb, mh, g = case
        out, lse = run_forward(q, k, v, mask, mb, mh, True, 0.25, 0.2, 11)
        return (out, lse) + run_backward(g, q, k, v, out, lse, mask, mb, mh, True, 0.25, 0.2, 11)
    finally:
        _C.set_cpu_isa(before)


def test_every_isa_gives_the_same_result():
    from conftest import ISAS

    rng = np.random.default_rng(6)
    q, k, v, mask, mb, mh, _ = make_case(rng, 2, 100, 90, 4, 2, 40, 24, "padding", True)
    case = (q, k, v, mask, mb, mh, rand(rng, (2, 100, 4, 24)))
    base = _isa_results(ISAS[0], case)
    for name in ISAS[1:]:
        for got, want, what in zip(_isa_results(name, case), base, ("out", "lse", "dq", "dk",
                                                                      "dv")):
            assert_close(got, want, rtol=1e-5, atol=1e-5, name=f"{what} on {name}")


@pytest.fixture
def threads():
    before = _C.num_threads()
    yield
    _C.set_num_threads(before)


def test_results_do_not_depend_on_the_thread_count(threads):
    rng = np.random.default_rng(9)
    q, k, v, mask, mb, mh, _ = make_case(rng, 3, 150, 150, 2, 2, 16, 16, None, True)
    g = rand(rng, (3, 150, 2, 16))
    results = []
    for t in (1, 3):
        _C.set_num_threads(t)
        out, lse = run_forward(q, k, v, mask, mb, mh, True, 0.25)
        results.append((out, lse) + run_backward(g, q, k, v, out, lse, mask, mb, mh, True, 0.25))
    for a, b in zip(*results):
        assert np.array_equal(a, b)


# --- argument checks (bindings) --------------------------------------------------------------

def fwd_args(**over):
    a = dict(out=np.zeros((2, 3, 4, 5), np.float32), lse=np.zeros((2, 4, 3), np.float32),
             q=np.zeros((2, 3, 4, 6), np.float32), k=np.zeros((2, 7, 2, 6), np.float32),
             v=np.zeros((2, 7, 2, 5), np.float32), mask=None, N=2, Tq=3, Tk=7, heads=4,
             kv_heads=2, D=6, Dv=5, mask_batch=1, mask_heads=1, causal=False, scale=1.0,
             dropout_rate=0.0, seed=0)
    a.update(over)
    return a


@pytest.mark.parametrize("over,match", [
    (dict(q=np.zeros((2, 3, 4, 7), np.float32)), "argument 'q' expected shape"),
    (dict(k=np.zeros((2, 7, 2, 6), np.float64)), "argument 'k' expected dtype float32"),
    (dict(v=np.zeros((2, 7, 2, 10), np.float32)[..., ::2]), "argument 'v' must be C-contiguous"),
    (dict(kv_heads=3, k=np.zeros((2, 7, 3, 6), np.float32), v=np.zeros((2, 7, 3, 5), np.float32)),
     "'heads' \\(4\\) must be a multiple of 'kv_heads' \\(3\\)"),
    (dict(mask=np.ones((2, 4, 3, 7), np.uint8), mask_batch=2, mask_heads=4),
     "argument 'mask' expected dtype bool"),
    (dict(mask=np.ones((3, 1, 3, 7), bool), mask_batch=3), "'mask_batch' and 'mask_heads'"),
    (dict(mask=np.ones((1, 1, 3, 6), bool)), "argument 'mask' expected shape"),
    (dict(dropout_rate=1.5), "'dropout_rate' must be in \\[0, 1\\]"),
    (dict(Tk=-1), "size 'Tk' must be >= 0"),
    (dict(N=0, Tq=2**40, Tk=2**40, out=np.zeros((0, 2**40, 4, 5), np.float32)[:0],
          q=np.zeros(0, np.float32), k=np.zeros(0, np.float32), v=np.zeros(0, np.float32),
          lse=np.zeros(0, np.float32), heads=2**30, kv_heads=1), "too large"),
])
def test_forward_argument_errors(over, match):
    with pytest.raises(ValueError, match=match):
        _C.attention_forward(**fwd_args(**over))


def test_outputs_overlapping_inputs_are_refused():
    a = fwd_args()
    buf = np.zeros(2 * 3 * 4 * 6, np.float32)
    a["q"] = buf.reshape(2, 3, 4, 6)
    a["out"] = buf[:120].reshape(2, 3, 4, 5)
    with pytest.raises(ValueError, match="output 'out' overlaps input 'q'"):
        _C.attention_forward(**a)
    q, k, v = a["q"], a["k"], a["v"]
    with pytest.raises(ValueError, match="output 'dq' overlaps output 'dk'"):
        big = np.zeros(2 * 3 * 4 * 6 + 2 * 7 * 2 * 6, np.float32)
        dq = big[:144].reshape(q.shape)
        dk = big[100:100 + 168].reshape(k.shape)
        _C.attention_backward(dq, dk, np.zeros(v.shape, np.float32),
                              np.zeros((2, 3, 4, 5), np.float32), q, k, v,
                              np.zeros((2, 3, 4, 5), np.float32), np.zeros((2, 4, 3), np.float32),
                              None, 2, 3, 7, 4, 2, 6, 5, 1, 1, False, 1.0, 0.0, 0)


def test_nan_in_one_query_stays_in_its_row(isa):
    """NaN propagates as IEEE arithmetic does (kernels.h): a NaN query element makes that
    query's output and lse NaN and nothing else; a NaN in a masked-out key's k is never used."""
    rng = np.random.default_rng(10)
    q, k, v, mask, mb, mh, _ = make_case(rng, 2, 70, 70, 2, 2, 8, 8, None, False)
    q[1, 40, 1, 3] = np.nan
    k[0, 5, 0, 2] = np.nan
    mask = np.ones((2, 2, 70, 70), bool)
    mask[0, 0, :, 5] = False
    out, lse = run_forward(q, k, v, mask, 2, 2, False, 0.3)
    bad = np.zeros(out.shape, bool)
    bad[1, 40, 1] = True
    assert np.array_equal(np.isnan(out), bad)
    assert np.isnan(lse[1, 1, 40]) and np.isnan(lse).sum() == 1
