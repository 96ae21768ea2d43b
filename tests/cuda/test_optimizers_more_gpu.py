"""fkeras._C_cuda's Lion / Ftrl / Lamb / Adafactor / Muon / ScheduleFreeAdamW updates against the
CPU kernels of fkeras._C (needs a GPU). Run by tools/gpu_check.sh; skipped without a GPU.

The per-element math is the CPU's float32 expressions; nvcc contracts a*b+c into FMAs where the
CPU's vector builds may or may not, so results agree to a few float32 ulps (rtol 2e-6), Ftrl's
cancelling linear term and non-1/2 powers to 1e-5 absolute.
"""

import numpy as np
import pytest

pytestmark = pytest.mark.cuda

SIZES = [1, 7, 33, 1000, 4099, 300001]


def _up(gpu, a):
    return gpu.DeviceArray.from_host(np.ascontiguousarray(a, np.float32))


def _C():
    from fkeras import _C

    return _C


def _state(rng, n, positive=False):
    a = rng.standard_normal(n).astype(np.float32)
    return np.abs(a) + np.float32(0.1) if positive else a


def _run(gpu, name, slots, inputs, args, n, rtol=2e-6, atol=1e-7):
    """Runs `name` on the CPU and the GPU: slots updated in place, inputs read only."""
    cpu = [s.copy() for s in slots]
    getattr(_C(), name)(*cpu, *inputs, n, *args)
    dev = [_up(gpu, s) for s in slots]
    getattr(gpu, name)(*dev, *[_up(gpu, i) for i in inputs], n, *args)
    for i, (d, c) in enumerate(zip(dev, cpu)):
        got = d.to_host()
        np.testing.assert_array_equal(np.isnan(got), np.isnan(c), err_msg=f"{name} slot {i}")
        np.testing.assert_allclose(got, c, rtol=rtol, atol=atol, err_msg=f"{name} slot {i}")


@pytest.mark.parametrize("n", SIZES)
def test_elementwise_updates_match_cpu(gpu, n):
    rng = np.random.default_rng(n)
    p, m, g, z, lin = (_state(rng, n) for _ in range(5))
    v, acc = _state(rng, n, True), _state(rng, n, True)
    _run(gpu, "lion_update", [p, m], [g], (0.01, 0.9, 0.99, 0.004), n)
    _run(gpu, "ftrl_update", [p, acc, lin], [g], (0.05, -0.5, 0.01, 0.02, 0.001, 0.1, 0.0), n,
         atol=1e-5)
    _run(gpu, "ftrl_update", [p, acc, lin], [g], (0.05, -0.3, 0.0, 0.0, 0.0, 0.0, 0.0), n,
         rtol=1e-5, atol=1e-5)
    _run(gpu, "schedule_free_adamw_update", [p, z, v], [g], (0.01, 0.9, 0.999, 1e-8, 3, 10, 0.004),
         n, rtol=1e-5, atol=1e-6)
    _run(gpu, "muon_update", [p], [g], (0.02, 1.7, 0.01), n)
    for nesterov in (False, True):
        cm, cout = m.copy(), np.full(n, np.nan, np.float32)
        _C().muon_momentum_update(cm, cout, g, n, 0.95, nesterov)
        dm, dout = _up(gpu, m), _up(gpu, np.full(n, np.nan, np.float32))
        gpu.muon_momentum_update(dm, dout, _up(gpu, g), n, 0.95, nesterov)
        np.testing.assert_allclose(dm.to_host(), cm, rtol=2e-6, atol=1e-7)
        np.testing.assert_allclose(dout.to_host(), cout, rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("wd", [0.0, 0.01])
def test_lamb_and_adafactor_match_cpu(gpu, n, wd):
    rng = np.random.default_rng(n + 1)
    p, m, g = (_state(rng, n) for _ in range(3))
    v = _state(rng, n, True)
    _run(gpu, "lamb_update", [p, m, v], [g], (0.01, 0.9, 0.999, 1e-6, 3, wd), n)
    for factored in (False, True):
        _run(gpu, "adafactor_update", [p, v], [g], (0.01, -0.8, 1e-30, 1e-3, 1.0, 4, factored, wd),
             n)


def test_sizes_off_the_vector_width(gpu):
    """n % 4 != 0 exercises the float4 body plus the scalar tail of the same buffers."""
    rng = np.random.default_rng(3)
    for n in (3, 5, 6, 9):
        p, m, g = (_state(rng, n) for _ in range(3))
        _run(gpu, "lion_update", [p, m], [g], (0.01, 0.9, 0.99, 0.0), n)


def test_lamb_is_bitwise_reproducible(gpu):
    rng = np.random.default_rng(4)
    n = 500_000
    p, m, g = (_state(rng, n) for _ in range(3))
    v = _state(rng, n, True)
    outs = []
    for _ in range(2):
        dp = _up(gpu, p)
        gpu.lamb_update(dp, _up(gpu, m), _up(gpu, v), _up(gpu, g), n, 0.01, 0.9, 0.999, 1e-6, 2,
                        0.0)
        outs.append(dp.to_host())
    np.testing.assert_array_equal(outs[0], outs[1])


def test_argument_errors(gpu):
    a, b = _up(gpu, np.zeros(4)), _up(gpu, np.zeros(4))
    with pytest.raises(ValueError, match="lamb_update: argument 'step' must be >= 1"):
        gpu.lamb_update(a, b, _up(gpu, np.zeros(4)), _up(gpu, np.zeros(4)), 4, 0.1, 0.9, 0.99,
                        1e-6, 0, 0.0)
    with pytest.raises(ValueError, match="lion_update: argument 'm' must have 4 elements"):
        gpu.lion_update(a, _up(gpu, np.zeros(3)), b, 4, 0.1, 0.9, 0.99, 0.0)
    with pytest.raises(ValueError, match="arguments 'param' and 'm' must be different"):
        gpu.lion_update(a, a, b, 4, 0.1, 0.9, 0.99, 0.0)
    with pytest.raises(ValueError, match="muon_update: argument 'ortho' must be a"):
        gpu.muon_update(a, np.zeros(4, np.float32), 4, 0.1, 1.0, 0.0)
