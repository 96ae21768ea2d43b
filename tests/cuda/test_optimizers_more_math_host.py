"""The math of the CUDA Lion/Ftrl/Lamb/Adafactor/Muon/ScheduleFreeAdamW updates, on the CPU.

`fkeras._C_cuda_host` compiles `fk_cuda/optimizer_more_math.h` (the code the GPU kernels call)
with the host compiler; Lamb and Adafactor run the GPU's two passes and block reduction. Each
update is compared with the CPU kernel of fkeras._C (the same float32 expressions: equal up to
the FMA contraction the CPU's vector builds may apply, a few float32 ulps) and with the float64
reference.
"""

import numpy as np
import pytest

from fkeras.backend.reference import optimizers_more as ref

H = pytest.importorskip("fkeras._C_cuda_host")
C = pytest.importorskip("fkeras._C")

SIZES = [1, 7, 33, 1000, 4099]


def close(actual, want, rtol, atol, what):
    actual = np.asarray(actual, np.float64).ravel()
    want = np.asarray(want, np.float64).ravel()
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(want), err_msg=f"{what}: NaN pattern")
    ok = ~np.isnan(want)
    np.testing.assert_allclose(actual[ok], want[ok], rtol=rtol, atol=atol, err_msg=what)


def _state(rng, n, positive=False):
    a = rng.standard_normal(n).astype(np.float32)
    return np.abs(a) + np.float32(0.1) if positive else a


def _check(name, got, buffers, ref_fn, cpu_fn, args, n, rtol64=2e-5, rtol_cpu=2e-6, atol=1e-7,
           atol64=1e-6):
    """got: the host results for buffers (updated in order); ref/CPU kernels run on copies."""
    want = [b.astype(np.float64) for b in buffers]
    ref_fn(*want, n, *args)
    cpu = [b.copy() for b in buffers]
    cpu_fn(*cpu, n, *args)
    for i, g in enumerate(got):
        close(g, want[i], rtol64, atol64, f"{name} buffer {i} vs float64")
        close(g, cpu[i], rtol_cpu, atol, f"{name} buffer {i} vs fkeras._C")


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("wd", [0.0, 0.01])
def test_lion(n, wd):
    rng = np.random.default_rng(n)
    p, m, g = (_state(rng, n) for _ in range(3))
    args = (0.01, 0.9, 0.99, wd)
    got = H.lion_step(p, m, g, *args)
    _check("lion", got, [p, m], lambda p_, m_, n_, *a: ref.lion_update(p_, m_, g, n_, *a),
           lambda p_, m_, n_, *a: C.lion_update(p_, m_, g, n_, *a), args, n)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("power", [-0.5, -0.3, 0.0])
def test_ftrl(n, power):
    rng = np.random.default_rng(n + 1)
    p, lin, g = (_state(rng, n) for _ in range(3))
    acc = _state(rng, n, positive=True)
    args = (0.05, power, 0.01, 0.02, 0.001, 0.1, 0.004)
    got = H.ftrl_step(p, acc, lin, g, *args)
    _check("ftrl", got, [p, acc, lin],
           lambda p_, a_, l_, n_, *a: ref.ftrl_update(p_, a_, l_, g, n_, *a),
           lambda p_, a_, l_, n_, *a: C.ftrl_update(p_, a_, l_, g, n_, *a), args, n,
           rtol64=1e-4, rtol_cpu=1e-5, atol=1e-5, atol64=1e-5)  # lin sums cancelling terms


@pytest.mark.parametrize("n", SIZES + [0, 300000])
@pytest.mark.parametrize("wd", [0.0, 0.01])
def test_lamb_two_passes(n, wd):
    rng = np.random.default_rng(n + 2)
    p, m, g = (_state(rng, n) for _ in range(3))
    v = _state(rng, n, positive=True)
    args = (0.01, 0.9, 0.999, 1e-6, 3, wd)
    got = H.lamb_update_emulated(p, m, v, g, *args)
    _check("lamb", got, [p, m, v],
           lambda p_, m_, v_, n_, *a: ref.lamb_update(p_, m_, v_, g, n_, *a),
           lambda p_, m_, v_, n_, *a: C.lamb_update(p_, m_, v_, g, n_, *a), args, n)


def test_lamb_zero_param_norm_uses_ratio_one():
    g = np.array([1.0, -2.0, 0.5], np.float32)
    z = np.zeros(3, np.float32)
    got = H.lamb_update_emulated(z, z, z, g, 0.1, 0.9, 0.999, 1e-6, 1, 0.0)
    cpu = [z.copy(), z.copy(), z.copy()]
    C.lamb_update(*cpu, g, 3, 0.1, 0.9, 0.999, 1e-6, 1, 0.0)
    np.testing.assert_array_equal(got[0], cpu[0])
    assert np.all(got[0] != 0)


@pytest.mark.parametrize("n", SIZES + [300000])
@pytest.mark.parametrize("factored", [False, True])
@pytest.mark.parametrize("wd", [0.0, 0.01])
def test_adafactor_two_passes(n, factored, wd):
    rng = np.random.default_rng(n + 3)
    p, g = _state(rng, n), _state(rng, n)
    v = _state(rng, n, positive=True)
    args = (0.01, -0.8, 1e-30, 1e-3, 1.0, 4, factored, wd)
    got = H.adafactor_update_emulated(p, v, g, *args)
    _check("adafactor", got, [p, v],
           lambda p_, v_, n_, *a: ref.adafactor_update(p_, v_, g, n_, *a),
           lambda p_, v_, n_, *a: C.adafactor_update(p_, v_, g, n_, *a), args, n)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("nesterov", [False, True])
def test_muon(n, nesterov):
    rng = np.random.default_rng(n + 4)
    m, g, p, ortho = (_state(rng, n) for _ in range(4))
    mm, out = H.muon_momentum_step(m, g, 0.95, nesterov)
    want_m, want_out = m.astype(np.float64), np.zeros(n)
    ref.muon_momentum_update(want_m, want_out, g, n, 0.95, nesterov)
    cpu_m, cpu_out = m.copy(), np.full(n, np.nan, np.float32)
    C.muon_momentum_update(cpu_m, cpu_out, g, n, 0.95, nesterov)
    close(mm, want_m, 2e-5, 1e-6, "muon m vs float64")
    close(out, want_out, 2e-5, 1e-6, "muon out vs float64")
    close(mm, cpu_m, 2e-6, 1e-7, "muon m vs fkeras._C")
    close(out, cpu_out, 2e-6, 1e-7, "muon out vs fkeras._C")
    got = H.muon_step(p, ortho, 0.02, 1.7, 0.01)
    want_p = p.astype(np.float64)
    ref.muon_update(want_p, ortho, n, 0.02, 1.7, 0.01)
    cpu_p = p.copy()
    C.muon_update(cpu_p, ortho, n, 0.02, 1.7, 0.01)
    close(got, want_p, 2e-5, 1e-6, "muon param vs float64")
    close(got, cpu_p, 2e-6, 1e-7, "muon param vs fkeras._C")


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("step, warmup", [(1, 0), (3, 10), (20, 10)])
def test_schedule_free_adamw(n, step, warmup):
    rng = np.random.default_rng(n + 5)
    p, z, g = (_state(rng, n) for _ in range(3))
    v = _state(rng, n, positive=True)
    args = (0.01, 0.9, 0.999, 1e-8, step, warmup, 0.004)
    got = H.sfadamw_step(p, z, v, g, *args)
    _check("sfadamw", got, [p, z, v],
           lambda p_, z_, v_, n_, *a: ref.schedule_free_adamw_update(p_, z_, v_, g, n_, *a),
           lambda p_, z_, v_, n_, *a: C.schedule_free_adamw_update(p_, z_, v_, g, n_, *a),
           args, n, rtol64=1e-4, rtol_cpu=1e-5)


def test_reduce_blocks_cover_any_size():
    for n in (0, 1, 1023, 1024, 1025, 10**6, 10**9):
        b = H.opt_reduce_blocks(n)
        assert 1 <= b <= 1024
        assert b == max(1, min(1024, -(-n // 1024)))


def test_nan_grad_propagates_as_cpu():
    g = np.array([np.nan, 1.0, 2.0, -1.0], np.float32)
    p, m = np.ones(4, np.float32), np.zeros(4, np.float32)
    got = H.lion_step(p, m, g, 0.01, 0.9, 0.99, 0.0)
    cpu = [p.copy(), m.copy()]
    C.lion_update(*cpu, g, 4, 0.01, 0.9, 0.99, 0.0)
    for a, b in zip(got, cpu):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    assert np.isnan(got[0][0])
    # Lamb: one NaN gradient makes the update norm NaN, and Keras's where() then takes ratio 1.
    v = np.ones(4, np.float32)
    got = H.lamb_update_emulated(p, m, v, g, 0.01, 0.9, 0.999, 1e-6, 1, 0.0)
    cpu = [p.copy(), m.copy(), v.copy()]
    C.lamb_update(*cpu, g, 4, 0.01, 0.9, 0.999, 1e-6, 1, 0.0)
    for a, b in zip(got, cpu):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
