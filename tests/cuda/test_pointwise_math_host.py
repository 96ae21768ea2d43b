"""The CUDA pointwise family's per-element math (cuda/include/fk_cuda/{activation,loss,
optimizer,dropout}_math.h), compiled for the CPU into fkeras._C_cuda_host: against NumPy
float64 references (fkeras.backend.reference) and against the CPU kernels of fkeras._C."""

import numpy as np
import pytest
from fkeras import _C
from fkeras.backend import codes
from fkeras.backend.reference import elementwise as ref
from fkeras.backend.reference import optimizers as ref_opt

H = pytest.importorskip("fkeras._C_cuda_host")

ALL_CODES = list(range(14))
NAMES = {v: k for k, v in codes.ACTIVATION_CODES.items() if k != "silu"}
ALPHA = {codes.ELU: 0.7, codes.LEAKY_RELU: 0.2}
FLT_MIN = float(np.finfo(np.float32).tiny)
SIZES = [1, 7, 33, 1000]


def nans(n):
    return np.full(n, np.nan, np.float32)


def close(actual, want, rtol, atol, what):
    actual = np.asarray(actual, np.float64)
    want = np.asarray(want, np.float64)
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(want), err_msg=f"{what}: NaN pattern")
    ok = ~np.isnan(want)
    np.testing.assert_allclose(actual[ok], want[ok], rtol=rtol, atol=atol, err_msg=what)


def wide_inputs():
    rng = np.random.default_rng(7)
    special = [0.0, -0.0, 1e-30, -1e-30, 1e-40, -1e-40, 80, -80, 87.3, -87.3, 88.72, -88.72,
               89, -89, 100, -100, 104, -104, 1e4, -1e4, 1e20, -1e20, 3e38, -3e38]
    x = np.concatenate([np.linspace(-120, 120, 24001), rng.standard_normal(4000) * 4, special])
    return x.astype(np.float32)


WIDE_X = wide_inputs()


# ---- activations ------------------------------------------------------------------------------

@pytest.mark.parametrize("code", ALL_CODES, ids=lambda c: NAMES[c])
def test_act_forward_matches_float64_and_cpu(code):
    x = WIDE_X
    n = x.size
    alpha = ALPHA.get(code, 0.0)
    y = H.act_forward(x, code, alpha)
    assert y.dtype == np.float32 and y.shape == x.shape
    want = np.empty(n)
    with np.errstate(over="ignore"):
        ref.activation_forward(want, x, n, code, alpha)
        want32 = want.astype(np.float32)
    assert not np.isnan(y).any(), "NaN from finite input"
    np.testing.assert_array_equal(np.isinf(y), np.isinf(want32), err_msg="overflow pattern")
    fin = np.isfinite(want32)
    close(y[fin], want[fin], rtol=1e-6, atol=FLT_MIN, what=f"{NAMES[code]} vs float64")
    cpu = nans(n)
    _C.activation_forward(cpu, x, n, code, alpha)
    # Same formulas; the CPU's AVX2/AVX-512 builds may contract to FMA: a few ulp.
    close(y, cpu, rtol=5e-7, atol=FLT_MIN, what=f"{NAMES[code]} vs fkeras._C")


@pytest.mark.parametrize("code", ALL_CODES, ids=lambda c: NAMES[c])
def test_act_backward_matches_float64_and_cpu(code):
    rng = np.random.default_rng(100 + code)
    alpha = ALPHA.get(code, 0.0)
    for n in SIZES + [20000]:
        x = (rng.standard_normal(n) * 3).astype(np.float32)
        if code == codes.EXPONENTIAL:
            x = np.clip(x, -80, 80)
        y = nans(n)
        _C.activation_forward(y, x, n, code, alpha)
        dy = rng.standard_normal(n).astype(np.float32)
        dx = H.act_backward(dy, x, y, code, alpha)
        want = np.empty(n)
        ref.activation_backward(want, dy, x, y, n, code, alpha)
        close(dx, want, rtol=1e-5, atol=1e-6, what=f"{NAMES[code]} dx vs float64, n={n}")
        cpu = nans(n)
        _C.activation_backward(cpu, dy, x, y, n, code, alpha)
        close(dx, cpu, rtol=2e-6, atol=1e-7, what=f"{NAMES[code]} dx vs fkeras._C, n={n}")


@pytest.mark.parametrize("code", ALL_CODES, ids=lambda c: NAMES[c])
def test_act_nan_propagates_as_cpu(code):
    x = np.array([np.nan, 1.0, np.nan, -1.0, np.inf, -np.inf] * 6, dtype=np.float32)
    alpha = ALPHA.get(code, 0.0)
    y = H.act_forward(x, code, alpha)
    cpu = nans(x.size)
    _C.activation_forward(cpu, x, x.size, code, alpha)
    np.testing.assert_array_equal(np.isnan(y), np.isnan(cpu))
    assert np.isnan(y[0::6]).all() and np.isnan(y[2::6]).all()
    dy = np.ones_like(x)
    dx = H.act_backward(dy, x, y, code, alpha)
    cpu_dx = nans(x.size)
    _C.activation_backward(cpu_dx, dy, x, y, x.size, code, alpha)
    np.testing.assert_array_equal(np.isnan(dx), np.isnan(cpu_dx))


def test_act_rejects_unknown_code():
    with pytest.raises(ValueError, match="act_forward.*activation.*received 14"):
        H.act_forward(np.zeros(3, np.float32), 14, 0.0)
    with pytest.raises(ValueError, match="act_backward.*'x'.*3 elements, received 2"):
        z = np.zeros(3, np.float32)
        H.act_backward(z, np.zeros(2, np.float32), z, 1, 0.0)


# ---- losses -----------------------------------------------------------------------------------

def test_sigmoid_ce_terms_match_float64_and_cpu():
    rng = np.random.default_rng(5)
    n = 5000
    x = np.concatenate([rng.standard_normal(n - 8) * 10,
                        [0, -0.0, 100, -100, 1e30, -1e30, 88, -88]]).astype(np.float32)
    z = rng.uniform(0, 1, n).astype(np.float32)
    loss = H.sigmoid_ce_term(x, z)
    want = np.empty(n)
    ref.sigmoid_crossentropy_forward(want, x, z, n)
    close(loss, want, rtol=2e-6, atol=1e-6, what="sigmoid CE vs float64")
    cpu = nans(n)
    _C.sigmoid_crossentropy_forward(cpu, x, z, n)
    # max(x, 0) - x z cancels; the CPU's AVX builds may fuse x z into an FMA: ulps of |x z|.
    tol = 4 * np.spacing(np.abs(x * z)).astype(np.float64) + 1e-7
    assert (np.abs(loss.astype(np.float64) - cpu) <= tol + 1e-6 * np.abs(cpu)).all()
    dloss = rng.standard_normal(n).astype(np.float32)
    d = H.sigmoid_ce_grad(dloss, x, z)
    want_d = np.empty(n)
    ref.sigmoid_crossentropy_backward(want_d, dloss, x, z, n)
    close(d, want_d, rtol=1e-5, atol=1e-6, what="sigmoid CE grad vs float64")
    cpu_d = nans(n)
    _C.sigmoid_crossentropy_backward(cpu_d, dloss, x, z, n)
    close(d, cpu_d, rtol=1e-6, atol=1e-7, what="sigmoid CE grad vs fkeras._C")
    nan_x = np.array([np.nan, 1.0], np.float32)
    assert np.isnan(H.sigmoid_ce_term(nan_x, np.zeros(2, np.float32))[0])


def test_softmax_terms_rebuild_cpu_softmax_rows():
    """The row kernels' terms combined as the kernel does (max, exp, double sum) give softmax,
    log_softmax and their gradients as fkeras._C does."""
    rng = np.random.default_rng(9)
    for cols in [1, 7, 33, 1000]:
        x = (rng.standard_normal(cols) * 5).astype(np.float32)
        m = np.float32(x.max())
        e = H.softmax_exp_term(x, m)
        close(e, np.exp((x - m).astype(np.float64)), rtol=1e-6, atol=0, what="exp(x - m)")
        y = (e * np.float32(1.0 / e.astype(np.float64).sum())).astype(np.float32)
        cpu = nans(cols)
        _C.softmax_forward(cpu, x, 1, cols)
        close(y, cpu, rtol=2e-6, atol=1e-30, what=f"softmax cols={cols}")
        ly = nans(cols)
        _C.log_softmax_forward(ly, x, 1, cols)
        dy = rng.standard_normal(cols).astype(np.float32)
        s = np.float32(dy.astype(np.float64).sum())
        dx = H.log_softmax_grad_term(dy, ly, s)
        cpu_dx = nans(cols)
        _C.log_softmax_backward(cpu_dx, dy, ly, 1, cols)
        close(dx, cpu_dx, rtol=1e-5, atol=1e-6, what=f"log_softmax grad cols={cols}")


# ---- dropout ----------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 12345, 2**40 + 17, -5])
@pytest.mark.parametrize("rate", [0.0, 0.1, 0.5, 0.9, 1.0])
def test_dropout_mask_equals_cpu_kernel(seed, rate):
    for n in [1, 7, 33, 1000, 70001]:
        x = np.ones(n, np.float32)
        y, mask = nans(n), nans(n)
        _C.dropout_forward(y, mask, x, n, rate, seed)
        got = H.dropout_mask(n, rate, seed)
        np.testing.assert_array_equal(got, mask, err_msg=f"n={n}")
    # The stream is counter-based: a window [first, first + k) equals that slice of the mask.
    np.testing.assert_array_equal(H.dropout_mask(100, rate, seed, 900), mask[900:1000])


def test_dropout_mask_statistics_and_errors():
    got = H.dropout_mask(200000, 0.3, 42)
    kept = got != 0
    assert abs(kept.mean() - 0.7) < 0.005
    np.testing.assert_array_equal(got[kept], np.float32(1.0) / np.float32(0.7))
    with pytest.raises(ValueError, match="dropout_mask.*'rate'.*1.5"):
        H.dropout_mask(3, 1.5, 0)


# ---- optimizers -------------------------------------------------------------------------------

def _state(rng, n, positive=False):
    a = rng.standard_normal(n).astype(np.float32)
    return np.abs(a) if positive else a


def _run_both(name, host_fn, ref_fn, cpu_fn, buffers, host_args, kernel_args):
    """Runs the host step, the float64 reference and the CPU kernel on copies of buffers."""
    n = buffers[0].size
    got = host_fn(*buffers, *host_args)
    want = [b.astype(np.float64) for b in buffers]
    ref_fn(*want, n, *kernel_args)
    cpu = [b.copy() for b in buffers]
    cpu_fn(*cpu, n, *kernel_args)
    for i, g in enumerate(got):
        close(g, want[i], rtol=2e-5, atol=1e-6, what=f"{name} buffer {i} vs float64")
        close(g, cpu[i], rtol=2e-6, atol=1e-7, what=f"{name} buffer {i} vs fkeras._C")


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("variant", ["plain", "momentum", "nesterov", "decay"])
def test_sgd_step(n, variant):
    rng = np.random.default_rng(n)
    p, v, g = _state(rng, n), _state(rng, n), _state(rng, n)
    mom = 0.0 if variant in ("plain", "decay") else 0.9
    nest = variant == "nesterov"
    wd = 0.01 if variant == "decay" else 0.0
    args = (0.1, mom, nest, wd)
    got = H.sgd_step(p, v, g, *args)
    want_p, want_v = p.astype(np.float64), v.astype(np.float64)
    ref_opt.sgd_update(want_p, want_v, g, n, *args)
    cpu_p, cpu_v = p.copy(), v.copy()
    _C.sgd_update(cpu_p, cpu_v, g, n, *args)
    close(got[0], want_p, 2e-5, 1e-6, "sgd param vs float64")
    close(got[0], cpu_p, 2e-6, 1e-7, "sgd param vs fkeras._C")
    if mom:
        close(got[1], cpu_v, 2e-6, 1e-7, "sgd velocity vs fkeras._C")


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("amsgrad", [False, True])
def test_adam_step(n, amsgrad):
    rng = np.random.default_rng(n + 1)
    p, m, g = _state(rng, n), _state(rng, n), _state(rng, n)
    v, vh = _state(rng, n, True), _state(rng, n, True)
    args = (0.01, 0.9, 0.999, 1e-7, 3, 0.004)
    got = H.adam_step(p, m, v, vh, g, *args, amsgrad)
    bufs64 = [b.astype(np.float64) for b in (p, m, v, vh)]
    ref_opt.adam_update(*bufs64[:3], bufs64[3] if amsgrad else None, g, n, *args)
    cpu = [b.copy() for b in (p, m, v, vh)]
    _C.adam_update(*cpu[:3], cpu[3] if amsgrad else None, g, n, *args)
    for i in range(3 + amsgrad):
        close(got[i], bufs64[i], 2e-5, 1e-6, f"adam buffer {i} vs float64")
        close(got[i], cpu[i], 2e-6, 1e-7, f"adam buffer {i} vs fkeras._C")


@pytest.mark.parametrize("n", SIZES)
def test_adamax_nadam_adagrad_adadelta_steps(n):
    rng = np.random.default_rng(n + 2)
    p, m, g = _state(rng, n), _state(rng, n), _state(rng, n)
    u = _state(rng, n, True)
    _run_both("adamax", H.adamax_step, ref_opt.adamax_update, _C.adamax_update, [p, m, u, g],
              (0.01, 0.9, 0.999, 1e-7, 4, 0.0), (0.01, 0.9, 0.999, 1e-7, 4, 0.0))
    nadam = (0.01, 0.9, 0.999, 1e-7, 5, 0.9, 0.91, 0.6, 0.002)
    _run_both("nadam", H.nadam_step, ref_opt.nadam_update, _C.nadam_update, [p, m, u, g],
              nadam, nadam)
    _run_both("adagrad", H.adagrad_step, ref_opt.adagrad_update, _C.adagrad_update, [p, u, g],
              (0.01, 1e-7, 0.0), (0.01, 1e-7, 0.0))
    acc_d = _state(rng, n, True)
    _run_both("adadelta", H.adadelta_step, ref_opt.adadelta_update, _C.adadelta_update,
              [p, u, acc_d, g], (0.5, 0.95, 1e-7, 0.001), (0.5, 0.95, 1e-7, 0.001))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("centered", [False, True])
@pytest.mark.parametrize("momentum", [0.0, 0.5])
def test_rmsprop_step(n, centered, momentum):
    rng = np.random.default_rng(n + 3)
    p, mom, avg, g = (_state(rng, n) for _ in range(4))
    vel = _state(rng, n, True) + 1.0  # centered: v - a^2 + eps stays positive
    avg = avg * 0.1
    args = (0.01, 0.9, momentum, 1e-7, centered, 0.0)
    got = H.rmsprop_step(p, vel, mom, avg, g, *args)
    b64 = [b.astype(np.float64) for b in (p, vel, mom, avg)]
    ref_opt.rmsprop_update(b64[0], b64[1], b64[2] if momentum else None,
                           b64[3] if centered else None, g, n, *args)
    cpu = [b.copy() for b in (p, vel, mom, avg)]
    _C.rmsprop_update(cpu[0], cpu[1], cpu[2] if momentum else None,
                      cpu[3] if centered else None, g, n, *args)
    used = [0, 1] + ([2] if momentum else []) + ([3] if centered else [])
    for i in used:
        close(got[i], b64[i], 2e-5, 1e-6, f"rmsprop buffer {i} vs float64")
        close(got[i], cpu[i], 2e-6, 1e-7, f"rmsprop buffer {i} vs fkeras._C")


def test_optimizer_nan_grad_propagates_as_cpu():
    g = np.array([np.nan, 1.0, 2.0], np.float32)
    p, m = np.zeros(3, np.float32), np.zeros(3, np.float32)
    v = np.ones(3, np.float32)
    got = H.adam_step(p, m, v, v.copy(), g, 0.01, 0.9, 0.999, 1e-7, 1, 0.0, True)
    cpu = [p.copy(), m.copy(), v.copy(), v.copy()]
    _C.adam_update(*cpu, g, 3, 0.01, 0.9, 0.999, 1e-7, 1, 0.0)
    for a, b in zip(got, cpu):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    assert np.isnan(got[0][0]) and np.isnan(got[3][0])
