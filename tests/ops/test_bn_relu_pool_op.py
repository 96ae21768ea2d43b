"""batch_norm_relu_max_pool_train (ops/bn_relu_pool.py), the fused BatchNormalization + ReLU +
MaxPooling2D op of the training plan: finite differences with random cotangents on all three
outputs (float64 reference device), bit-equality of the outputs and every gradient with the
unfused chain batch_norm_relu_train -> max_pool (fp32 and under the bf16-products scope), the
fallback of a device without the fused kernels, shapes and errors."""

import numpy as np
import pytest
from op_testing import fd_check

import fkeras
from fkeras.backend import devices
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.ops import bn_relu_pool
from fkeras.ops.normalization import batch_norm_relu_train
from fkeras.ops.pooling import max_pool
from fkeras.ops.registry import REGISTRY

# (input shape, pool): odd sizes (the pool drops the last row / column), pools 2, 3 and uneven,
# channels off the vector width, batch 1.
CASES = [
    ((2, 5, 7, 3), 2),
    ((1, 7, 6, 17), 3),
    ((3, 6, 9, 5), (2, 3)),
    ((2, 8, 8, 40), 2),
]


def _problem(shape, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 1.5 + 0.3).astype(np.float32)
    gamma = (rng.standard_normal(shape[-1]) * 0.5 + 1.0).astype(np.float32)
    beta = (rng.standard_normal(shape[-1]) * 0.5).astype(np.float32)
    return x, gamma, beta, rng


def _fused(pool):
    return lambda x, g, b: bn_relu_pool.batch_norm_relu_max_pool_train(x, g, b, 1e-3, pool)


def _chain(pool):
    def run(x, g, b):
        y, mean, var = batch_norm_relu_train(x, g, b, axis=-1, epsilon=1e-3)
        return max_pool(y, pool, None, "valid", "channels_last"), mean, var

    return run


@pytest.mark.parametrize("shape,pool", CASES[:3])
def test_gradients_match_finite_differences(shape, pool):
    x, g, b, rng = _problem(shape, 1)
    fd_check(_fused(pool), [x, g, b], wrt=[0, 1, 2], rng=rng, eps=1e-6, tol=1e-6)


def _values_and_grads(fn, x, g, b, cots):
    xs = [fkeras.Variable(a) for a in (x, g, b)]
    with fkeras.GradientTape() as tape:
        outs = fn(*xs)
        loss = sum(fkeras.ops.sum(o * c) for o, c in zip(outs, cots))
    return [np.asarray(o) for o in outs] + [np.asarray(d) for d in tape.gradient(loss, xs)]


@pytest.mark.parametrize("shape,pool", CASES)
@pytest.mark.parametrize("stats_cotangent", [False, True], ids=["y", "y+stats"])
@pytest.mark.parametrize("bf16", [False, True], ids=["fp32", "bf16"])
def test_bit_equal_to_the_chain(shape, pool, stats_cotangent, bf16):
    x, g, b, rng = _problem(shape, 2)
    chain = _chain(pool)
    shapes = [np.shape(o) for o in chain(x, g, b)]
    cots = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    if not stats_cotangent:
        cots[1] = cots[2] = np.zeros(shape[-1], np.float32)
    scope = devices.bf16_products() if bf16 else devices.fp32_products()
    with scope:
        got = _values_and_grads(_fused(pool), x, g, b, cots)
        want = _values_and_grads(chain, x, g, b, cots)
    for name, a, e in zip(("y", "mean", "var", "dx", "dgamma", "dbeta"), got, want):
        assert a.dtype == e.dtype == np.float32, name
        np.testing.assert_array_equal(a, e, err_msg=name)


def test_large_pool_window_runs_the_chain(monkeypatch):
    # More than 128 elements per window (the int8 positions' range): the chain's kernels.
    seen = []
    cpu = devices.get_device("cpu")
    kernel = cpu.kernels["maxpool2d_forward"]
    monkeypatch.setitem(cpu.kernels, "maxpool2d_forward", lambda *a: seen.append(1) or kernel(*a))
    x, g, b, rng = _problem((1, 24, 12, 3), 6)
    cots = [rng.standard_normal(s).astype(np.float32) for s in [(1, 1, 1, 3), (3,), (3,)]]
    with fkeras.device("cpu"):  # the spied table's device (also when another is the default)
        got = _values_and_grads(_fused((24, 12)), x, g, b, cots)
        assert seen
        want = _values_and_grads(_chain((24, 12)), x, g, b, cots)
    for a, e in zip(got, want):
        np.testing.assert_array_equal(a, e)


def test_device_without_the_fused_kernels_runs_the_chain():
    cpu = devices.get_device("cpu")
    bare = devices.Device("cpu", np.float32,
                          {k: v for k, v in cpu.kernels.items() if k not in bn_relu_pool.KERNELS},
                          cpu.native_kernel_names)
    x, g, b, rng = _problem((2, 7, 6, 5), 3)
    op = REGISTRY["batch_norm_relu_max_pool_train"]
    attrs = dict(epsilon=1e-3, pool_size=(2, 3))
    results = []
    for dev in (cpu, bare):
        with fkeras.GradientTape():  # recording: the max pool saves its indices
            outs, saved = op.forward(dev, x, g, b, **attrs)
        assert saved[0] == ("fused" if dev is cpu else "chain")
        cot = np.random.default_rng(4).standard_normal(outs[0].shape).astype(np.float32)
        zeros = np.zeros(5, np.float32)
        grads = op.backward(dev, saved, [cot, zeros, zeros], (True, True, True), **attrs)
        results.append([*outs, *grads])
    for a, e in zip(*results):
        np.testing.assert_array_equal(a, e)


def test_no_gamma_or_beta():
    x, _, _, rng = _problem((2, 6, 6, 4), 5)
    cots = [rng.standard_normal(s).astype(np.float32) for s in [(2, 3, 3, 4), (4,), (4,)]]
    xv = fkeras.Variable(x)
    results = []
    for fn in (_fused(2), _chain(2)):
        with fkeras.GradientTape() as tape:
            outs = fn(xv, None, None)
            loss = sum(fkeras.ops.sum(o * c) for o, c in zip(outs, cots))
        results.append([np.asarray(o) for o in outs] + [np.asarray(tape.gradient(loss, xv))])
    for a, e in zip(*results):
        np.testing.assert_array_equal(a, e)


def test_symbolic_shape_and_errors():
    y, mean, var = bn_relu_pool.batch_norm_relu_max_pool_train(
        KerasTensor((None, 9, 11, 6)), KerasTensor((6,)), None, pool_size=(2, 3))
    assert y.shape == (None, 4, 3, 6) and mean.shape == (6,) and var.shape == (6,)
    with pytest.raises(ValueError, match="rank-4"):
        bn_relu_pool.batch_norm_relu_max_pool_train(np.zeros((1, 6, 2), np.float32))
    with pytest.raises(ValueError, match="zero or negative"):
        bn_relu_pool.batch_norm_relu_max_pool_train(np.zeros((1, 6, 6, 2), np.float32),
                                                    pool_size=7)
    with pytest.raises(ValueError, match="gamma"):
        bn_relu_pool.batch_norm_relu_max_pool_train(np.zeros((1, 6, 6, 2), np.float32),
                                                    np.ones(3, np.float32))
