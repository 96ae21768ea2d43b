"""fkeras._C_cuda's fused attention against the CPU kernels of fkeras._C (needs a GPU).

Outputs are pre-filled with NaN on the device, so a kernel that skips an element fails.
Run by tools/gpu_check.sh (`pytest -m cuda`); skipped without a GPU.
"""

import numpy as np
import pytest

pytestmark = pytest.mark.cuda

# (N, Tq, Tk, heads, kv_heads, D, Dv, mask, causal, dropout_rate)
CASES = [
    (1, 1, 1, 1, 1, 1, 1, None, False, 0.0),
    (2, 7, 7, 2, 1, 7, 5, None, True, 0.0),
    (1, 33, 33, 4, 2, 33, 33, "full", False, 0.25),
    (2, 100, 130, 4, 4, 64, 64, "broadcast", True, 0.0),
    (1, 1000, 1000, 2, 1, 64, 64, None, True, 0.1),
    (1, 129, 7, 1, 1, 128, 128, None, False, 0.0),
    (1, 6, 0, 1, 1, 4, 4, None, False, 0.0),
    (1, 5, 9, 2, 1, 8, 8, "empty_rows", False, 0.3),
    (1, 40, 20, 2, 2, 16, 16, None, True, 0.0),
    (1, 20, 80, 1, 1, 4, 4, "empty_rows", True, 0.0),  # a uniform row reaches keys past the
    # diagonal: the causal tile skip of dk/dv must not drop it
    (1, 3, 70, 1, 1, 300, 200, None, False, 0.0),  # large heads: opt-in shared memory
    (1, 2, 5, 1, 1, 4000, 7, None, False, 0.0),    # too large for shared memory: global scratch
]


def _C():
    from fkeras import _C

    return _C


def _up(gpu, a):
    return gpu.DeviceArray.from_host(np.ascontiguousarray(a, np.float32))


def _nan(gpu, shape):
    return gpu.DeviceArray.from_host(np.full(shape, np.nan, np.float32))


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
        mask = rng.random((1, 1, Tq, Tk)) < 0.6
        mask[:, :, 2] = False
    sizes = dict(N=N, Tq=Tq, Tk=Tk, heads=heads, kv_heads=kv, D=D, Dv=Dv, mask_batch=mb,
                 mask_heads=mh)
    opts = dict(causal=causal, scale=float(1 / np.sqrt(D)), dropout_rate=rate, seed=99)
    return q, k, v, mask, sizes, opts


def _close(got, want, rtol, atol, what):
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{what}: NaN")
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want), err_msg=f"{what}: inf")
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=rtol, atol=atol, err_msg=what)


@pytest.mark.parametrize("idx", range(len(CASES)))
def test_forward_and_backward_match_cpu(gpu, idx):
    q, k, v, mask, sizes, opts = _case(CASES[idx], idx)
    s = sizes
    oshape, lshape = (s["N"], s["Tq"], s["heads"], s["Dv"]), (s["N"], s["heads"], s["Tq"])
    cout, clse = np.full(oshape, np.nan, np.float32), np.full(lshape, np.nan, np.float32)
    _C().attention_forward(cout, clse, q, k, v, mask, **s, **opts)
    dq_, dk_, dv_ = _up(gpu, q), _up(gpu, k), _up(gpu, v)
    for m in (mask, None if mask is None else gpu.DeviceArray.from_host(mask.astype(np.int32))):
        out, lse = _nan(gpu, oshape), _nan(gpu, lshape)
        gpu.attention_forward(out, lse, dq_, dk_, dv_, m, **s, **opts)
        _close(out.to_host(), cout, 1e-4, 1e-5, "out")
        _close(lse.to_host(), clse, 1e-5, 1e-5, "lse")
    dout = np.random.default_rng(idx + 50).standard_normal(oshape).astype(np.float32)
    cgrads = [np.full(a.shape, np.nan, np.float32) for a in (q, k, v)]
    _C().attention_backward(*cgrads, dout, q, k, v, cout, clse, mask, **s, **opts)
    grads = [_nan(gpu, a.shape) for a in (q, k, v)]
    gpu.attention_backward(*grads, _up(gpu, dout), dq_, dk_, dv_, _up(gpu, cout),
                           _up(gpu, clse), mask, **s, **opts)
    for name, g, c in zip(("dq", "dk", "dv"), grads, cgrads):
        _close(g.to_host(), c, 1e-3, 1e-4, name)


def test_self_attention_may_pass_one_array_as_q_k_v(gpu):
    x = np.random.default_rng(0).standard_normal((2, 9, 2, 8)).astype(np.float32)
    sizes = dict(N=2, Tq=9, Tk=9, heads=2, kv_heads=2, D=8, Dv=8, mask_batch=1, mask_heads=1)
    cout, clse = np.zeros_like(x), np.zeros((2, 2, 9), np.float32)
    _C().attention_forward(cout, clse, x, x, x, None, **sizes, causal=False, scale=0.3,
                           dropout_rate=0.0, seed=0)
    dx = _up(gpu, x)
    out, lse = _nan(gpu, x.shape), _nan(gpu, (2, 2, 9))
    gpu.attention_forward(out, lse, dx, dx, dx, None, **sizes, causal=False, scale=0.3,
                          dropout_rate=0.0, seed=0)
    _close(out.to_host(), cout, 1e-5, 1e-6, "self attention")


def test_results_are_bitwise_reproducible(gpu):
    q, k, v, mask, sizes, opts = _case(CASES[4], 3)
    runs = []
    for _ in range(2):
        s = sizes
        out = _nan(gpu, (s["N"], s["Tq"], s["heads"], s["Dv"]))
        lse = _nan(gpu, (s["N"], s["heads"], s["Tq"]))
        gpu.attention_forward(out, lse, _up(gpu, q), _up(gpu, k), _up(gpu, v), None, **s, **opts)
        grads = [_nan(gpu, a.shape) for a in (q, k, v)]
        gpu.attention_backward(*grads, out, _up(gpu, q), _up(gpu, k), _up(gpu, v), out, lse,
                               None, **s, **opts)
        runs.append([a.to_host() for a in (out, lse, *grads)])
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)


def test_argument_errors(gpu):
    q = _up(gpu, np.zeros((1, 2, 2, 4)))
    out, lse = _nan(gpu, (1, 2, 2, 4)), _nan(gpu, (1, 2, 2))
    base = dict(N=1, Tq=2, Tk=2, D=4, Dv=4, mask_batch=1, mask_heads=1, causal=False, scale=1.0,
                seed=0)
    with pytest.raises(ValueError, match="attention_forward: argument 'heads'"):
        gpu.attention_forward(out, lse, q, q, q, None, heads=3, kv_heads=2, dropout_rate=0.0,
                              **base)
    with pytest.raises(ValueError, match="dropout_rate"):
        gpu.attention_forward(out, lse, q, q, q, None, heads=2, kv_heads=2, dropout_rate=1.5,
                              **base)
    with pytest.raises(ValueError, match="argument 'mask'"):
        gpu.attention_forward(out, lse, q, q, q, np.ones((1, 1, 2, 3), bool), heads=2,
                              kv_heads=2, dropout_rate=0.0, **base)
    with pytest.raises(ValueError, match="an output overlaps"):
        gpu.attention_forward(q, lse, q, q, q, None, heads=2, kv_heads=2, dropout_rate=0.0,
                              **base)
    with pytest.raises(ValueError, match="head sizes D"):
        gpu.attention_forward(out, lse, q, q, q, None, heads=2, kv_heads=2, dropout_rate=0.0,
                              **{**base, "D": 2**24})
    with pytest.raises(ValueError, match="argument 'v' must have"):
        gpu.attention_forward(out, lse, q, q, _up(gpu, np.zeros(3)), None, heads=2, kv_heads=2,
                              dropout_rate=0.0, **base)
