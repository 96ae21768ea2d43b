"""lion/ftrl/lamb/adafactor/muon/schedule_free_adamw kernels vs the float64 reference, on every
ISA, outputs pre-filled with NaN where the kernel overwrites them, edge sizes."""

import numpy as np
import pytest

from fkeras import _C
from fkeras.backend.reference import KERNELS as REF

SIZES = [0, 1, 7, 33, 1000, 70000]

# name -> (slot names and initial values, extra args after n, overwritten-output names)
SPECS = {
    "lion_update": (["param", "m"], (0.01, 0.9, 0.99, 0.1), []),
    "ftrl_update": (["param", "accumulator", "linear"],  # param is read (shrinkage)
                    (0.1, -0.5, 0.01, 0.02, 0.01, 0.1, 0.0), []),
    "lamb_update": (["param", "m", "v"], (0.01, 0.9, 0.999, 1e-7, 3, 0.05), []),
    "adafactor_update": (["param", "v"], (0.01, -0.8, 1e-30, 1e-3, 1.0, 3, False, 0.01), []),
    "muon_momentum_update": (["m", "out"], (0.95, True), ["out"]),
    "schedule_free_adamw_update": (["param", "z", "v"], (0.01, 0.9, 0.999, 1e-8, 3, 2, 0.01),
                                   []),
}


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", sorted(SPECS))
def test_kernel_matches_reference(isa, name, n):
    slots, extra, overwritten = SPECS[name]
    rng = np.random.default_rng(n)
    bufs = {s: rng.standard_normal(n).astype(np.float32) for s in slots}
    for s in ("v", "accumulator"):
        if s in bufs:
            bufs[s] = np.abs(bufs[s]) + 0.1
    grad = rng.standard_normal(n).astype(np.float32)
    ref = {s: b.astype(np.float64) for s, b in bufs.items()}
    for s in overwritten:
        bufs[s][...] = np.nan
    getattr(_C, name)(*bufs.values(), grad, n, *extra)
    REF[name](*ref.values(), grad.astype(np.float64), n, *extra)
    for s in slots:
        # Ftrl's param is (clip(linear) - linear) / quadratic: a float32 cancellation when
        # linear is near +/-l1, so its absolute error follows |linear| (~1e-6 of it).
        atol = 1e-5 if name == "ftrl_update" else 1e-6
        np.testing.assert_allclose(bufs[s], ref[s], rtol=2e-5, atol=atol, err_msg=s)


def test_muon_update_matches_reference(isa):
    rng = np.random.default_rng(0)
    for n in SIZES:
        p, o = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        r = p.astype(np.float64)
        _C.muon_update(p, o, n, 0.01, 1.3, 0.004)
        REF["muon_update"](r, o.astype(np.float64), n, 0.01, 1.3, 0.004)
        np.testing.assert_allclose(p, r, rtol=1e-5, atol=1e-7)


def test_adafactor_factored_reads_v_only():
    rng = np.random.default_rng(2)
    p = rng.standard_normal(12).astype(np.float32)
    v = np.abs(rng.standard_normal(12)).astype(np.float32) + 0.1
    v0 = v.copy()
    _C.adafactor_update(p, v, rng.standard_normal(12).astype(np.float32), 12, 0.01, -0.8, 1e-30,
                        1e-3, 1.0, 2, True, 0.0)
    np.testing.assert_array_equal(v, v0)


@pytest.mark.parametrize("call,match", [
    (lambda: _C.lamb_update(np.zeros(3, np.float32), np.zeros(3, np.float32),
                            np.zeros(3, np.float32), np.zeros(3, np.float32), 3, 0.1, 0.9,
                            0.999, 1e-7, 0, 0.0), "step"),
    (lambda: _C.lion_update(np.zeros(3, np.float32), np.zeros(2, np.float32),
                            np.zeros(3, np.float32), 3, 0.1, 0.9, 0.99, 0.0), "lion_update"),
    (lambda: _C.ftrl_update(np.zeros(3, np.float64), np.zeros(3, np.float32),
                            np.zeros(3, np.float32), np.zeros(3, np.float32), 3, 0.1, -0.5,
                            0.0, 0.0, 0.0, 0.0, 0.0), "param"),
])
def test_argument_checks(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()
