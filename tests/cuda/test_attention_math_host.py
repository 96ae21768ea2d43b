"""The CUDA fused attention's algorithm, run on the CPU (no GPU needed).

`fkeras._C_cuda_host` compiles `fk_cuda/attention_math.h` (the per-thread code of the GPU
kernels: online-softmax key tiles, dq tiles, per-key dk/dv rows) and runs it over the kernels'
own tiles, causal bounds and skips. Compared with the CPU kernels `fkeras._C.attention_*` and
the float64 reference on edge sizes, GQA, masks (full, broadcast, rows without any visible key),
causal with Tq != Tk, and dropout (the same counter-based draws as dropout_forward).
"""

import numpy as np
import pytest

from fkeras.backend.reference import attention as ref

H = pytest.importorskip("fkeras._C_cuda_host")
C = pytest.importorskip("fkeras._C")

# (N, Tq, Tk, heads, kv_heads, D, Dv, mask, causal, dropout_rate)
CASES = [
    (1, 1, 1, 1, 1, 1, 1, None, False, 0.0),
    (2, 7, 7, 2, 1, 5, 3, None, True, 0.0),
    (1, 33, 20, 4, 2, 16, 8, "full", False, 0.3),
    (2, 70, 65, 2, 2, 7, 9, "broadcast", True, 0.0),
    (1, 5, 0, 1, 1, 4, 4, None, False, 0.0),
    (1, 4, 6, 2, 1, 3, 3, "empty_rows", False, 0.2),
    (1, 3, 5, 2, 2, 4, 4, None, True, 0.0),
    (1, 20, 10, 1, 1, 4, 4, None, True, 0.0),
    (1, 9, 17, 3, 3, 33, 1, "empty_rows", True, 0.5),
    (1, 20, 80, 1, 1, 4, 4, "empty_rows", True, 0.0),  # a uniform row reaches keys past the
    # diagonal: the causal tile skip of dk/dv must not drop it
]


def _case(case, seed):
    N, Tq, Tk, heads, kv, D, Dv, mask_kind, causal, rate = case
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((N, Tq, heads, D)).astype(np.float32)
    k = rng.standard_normal((N, Tk, kv, D)).astype(np.float32)
    v = rng.standard_normal((N, Tk, kv, Dv)).astype(np.float32)
    mb, mh, mask = 1, 1, None
    if mask_kind == "full":
        mb, mh = N, heads
        mask = rng.random((N, heads, Tq, Tk)) < 0.7
    elif mask_kind == "broadcast":
        mask = rng.random((1, 1, Tq, Tk)) < 0.8
    elif mask_kind == "empty_rows":
        mb = N
        mask = rng.random((N, 1, Tq, Tk)) < 0.6
        mask[:, :, 1] = False  # row 1 sees no key: uniform attention, lse -inf
    sizes = dict(N=N, Tq=Tq, Tk=Tk, heads=heads, kv_heads=kv, D=D, Dv=Dv, mask_batch=mb,
                 mask_heads=mh)
    opts = dict(causal=causal, scale=float(1 / np.sqrt(max(D, 1))), dropout_rate=rate, seed=1234)
    return q, k, v, mask, sizes, opts


def _m32(mask):
    return None if mask is None else mask.astype(np.int32)


def _cpu_forward(q, k, v, mask, sizes, opts):
    s = sizes
    out = np.full((s["N"], s["Tq"], s["heads"], s["Dv"]), np.nan, np.float32)
    lse = np.full((s["N"], s["heads"], s["Tq"]), np.nan, np.float32)
    C.attention_forward(out, lse, q, k, v, mask, **s, **opts)
    return out, lse


def _close(got, want, rtol, atol, what):
    got, want = np.asarray(got, np.float64).ravel(), np.asarray(want, np.float64).ravel()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{what}: NaN pattern")
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want), err_msg=f"{what}: inf pattern")
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=rtol, atol=atol, err_msg=what)


def test_tiles_and_shared_memory_sizes():
    rows, bk, bq = H.attention_tiles()
    assert (rows, bk, bq) == (64, 16, 16)
    fwd, dq, dkv = H.attention_smem_floats(64, 64)
    assert fwd * 4 <= 48 * 1024  # the forward fits without the opt-in at head size 64
    assert fwd == 64 * (65 + 65) + 16 * 128 and dq == 64 * 195 + 16 * 128
    assert dkv == 64 * 260 + 16 * 128 + 48
    # Odd head sizes: rounded up to whole 16-byte vectors (aligned per-block slices).
    assert all(f % 4 == 0 and f >= 64 * 8 + 16 * 7 for f in H.attention_smem_floats(3, 4))


@pytest.mark.parametrize("idx", range(len(CASES)))
def test_forward_matches_cpu_kernel_and_float64(idx):
    q, k, v, mask, sizes, opts = _case(CASES[idx], idx)
    out, lse = H.attention_forward_emulated(q, k, v, _m32(mask), **sizes, **opts)
    cout, clse = _cpu_forward(q, k, v, mask, sizes, opts)
    _close(out, cout, 1e-5, 1e-6, "out vs fkeras._C")
    _close(lse, clse, 1e-6, 1e-6, "lse vs fkeras._C")
    wout, wlse = np.zeros(cout.shape), np.zeros(clse.shape)
    ref.attention_forward(wout, wlse, q, k, v, mask, **sizes, **opts)
    _close(out, wout, 1e-4, 1e-5, "out vs float64")
    _close(lse, wlse, 1e-5, 1e-5, "lse vs float64")


@pytest.mark.parametrize("idx", range(len(CASES)))
def test_backward_matches_cpu_kernel_and_float64(idx):
    q, k, v, mask, sizes, opts = _case(CASES[idx], 100 + idx)
    cout, clse = _cpu_forward(q, k, v, mask, sizes, opts)
    dout = np.random.default_rng(idx).standard_normal(cout.shape).astype(np.float32)
    dq, dk, dv = H.attention_backward_emulated(dout, q, k, v, cout, clse, _m32(mask), **sizes,
                                               **opts)
    cdq, cdk, cdv = (np.full(a.shape, np.nan, np.float32) for a in (q, k, v))
    C.attention_backward(cdq, cdk, cdv, dout, q, k, v, cout, clse, mask, **sizes, **opts)
    for name, got, cpu in (("dq", dq, cdq), ("dk", dk, cdk), ("dv", dv, cdv)):
        _close(got, cpu, 1e-4, 1e-5, f"{name} vs fkeras._C")
    w = [np.zeros(a.shape) for a in (q, k, v)]
    ref.attention_backward(*w, dout, q, k, v, cout, clse, mask, **sizes, **opts)
    for name, got, want in zip(("dq", "dk", "dv"), (dq, dk, dv), w):
        _close(got, want, 1e-3, 1e-4, f"{name} vs float64")


def test_uniform_rows_and_their_gradients():
    """A row with no visible key attends uniformly (out = mean of z v), lse -inf, dq row 0."""
    q, k, v, mask, sizes, opts = _case(CASES[5], 7)
    out, lse = H.attention_forward_emulated(q, k, v, _m32(mask), **sizes, **opts)
    lse = lse.reshape(sizes["N"], sizes["heads"], sizes["Tq"])
    assert np.all(lse[:, :, 1] == -np.inf) and np.all(np.isfinite(lse[:, :, [0, 2, 3]]))
    dout = np.ones(out.shape, np.float32)
    dq, _, dv = H.attention_backward_emulated(dout, q, k, v, out, lse, _m32(mask), **sizes, **opts)
    assert np.all(dq.reshape(q.shape)[:, 1] == 0)
    assert np.abs(dv).sum() > 0


def test_no_dropout_row_sums_to_one():
    """With v = 1 everywhere the output is 1 for every row with a visible key."""
    N, Tq, Tk = 1, 9, 70
    q = np.random.default_rng(0).standard_normal((N, Tq, 1, 8)).astype(np.float32) * 3
    k = np.random.default_rng(1).standard_normal((N, Tk, 1, 8)).astype(np.float32)
    v = np.ones((N, Tk, 1, 2), np.float32)
    out, _ = H.attention_forward_emulated(q, k, v, None, N, Tq, Tk, 1, 1, 8, 2, 1, 1, True, 0.5,
                                          0.0, 0)
    np.testing.assert_allclose(out, 1.0, rtol=1e-6)
