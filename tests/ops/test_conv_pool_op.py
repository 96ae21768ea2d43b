"""conv2d_maxpool2d (ops/conv_pool.py), the fused Conv2D + MaxPooling2D op of the training plan:
finite differences with random cotangents (float64 reference device), bit-equality of the
output and every gradient with the unfused conv2d -> max_pool pair (fp32 and under the
bf16-products scope), the fallback of a device without the fused kernels, shapes and errors."""

import numpy as np
import pytest
from op_testing import fd_check

import fkeras
from fkeras.backend import codes, devices
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.ops import conv_pool
from fkeras.ops.conv import conv2d
from fkeras.ops.pooling import max_pool
from fkeras.ops.registry import REGISTRY

# (input shape, filters, kernel, conv strides, padding, dilation, pool): odd sizes (the pool
# drops the last row / column), pools 2, 3 and uneven, strides, 'same', dilation, groups.
CASES = [
    ((2, 9, 11, 3), 16, 3, 1, "valid", 1, 2),
    ((2, 10, 12, 2), 32, 3, 1, "valid", 1, 3),
    ((1, 11, 10, 4), 16, (3, 2), 1, "same", 1, (3, 2)),
    ((2, 13, 12, 3), 16, 3, 2, "same", 1, 2),
    ((1, 12, 13, 2), 16, 3, 1, "same", 2, 2),
    ((2, 9, 9, 4), 6, 3, 1, "valid", 1, 2),  # kernel C = 2: groups = 2
]
ACTS = [(codes.LINEAR, 0.0), (codes.RELU, 0.0), (codes.LEAKY_RELU, 0.3)]


def _problem(case, seed=0):
    shape, K, k, _, _, _, _ = case
    rng = np.random.default_rng(seed)
    kh, kw = (k, k) if isinstance(k, int) else k
    cin = shape[-1] // 2 if K == 6 else shape[-1]
    x = rng.standard_normal(shape).astype(np.float32)
    w = (rng.standard_normal((kh, kw, cin, K)) * 0.4).astype(np.float32)
    b = rng.standard_normal(K).astype(np.float32)
    return x, w, b, rng


def _fused(case, code, alpha):
    _, _, _, s, pad, d, pool = case
    return lambda x, w, b: conv_pool.conv2d_maxpool2d(x, w, b, s, pad, d, code, alpha, pool)


def _pair(case, code, alpha):
    _, _, _, s, pad, d, pool = case
    return lambda x, w, b: max_pool(conv2d(x, w, b, s, pad, "channels_last", d, code, alpha),
                                    pool, None, "valid", "channels_last")


@pytest.mark.parametrize("case", CASES[:4])
@pytest.mark.parametrize("code,alpha", ACTS)
def test_gradients_match_finite_differences(case, code, alpha):
    # Distinct window values (random float64 inputs): the max is locally smooth.
    x, w, b, rng = _problem(case, 1)
    fd_check(_fused(case, code, alpha), [x, w, b], wrt=[0, 1, 2], rng=rng, eps=1e-6, tol=1e-6)


def _values_and_grads(fn, x, w, b, cot):
    xs = [fkeras.Variable(a) for a in (x, w, b)]
    with fkeras.GradientTape() as tape:
        y = fn(*xs)
        loss = fkeras.ops.sum(y * cot)
    return [np.asarray(y)] + [np.asarray(g) for g in tape.gradient(loss, xs)]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("code,alpha", ACTS)
@pytest.mark.parametrize("bf16", [False, True], ids=["fp32", "bf16"])
def test_bit_equal_to_the_pair(case, code, alpha, bf16):
    x, w, b, rng = _problem(case, 2)
    pair = _pair(case, code, alpha)
    cot = rng.standard_normal(np.shape(pair(x, w, b))).astype(np.float32)
    scope = devices.bf16_products() if bf16 else devices.fp32_products()
    with scope:
        got = _values_and_grads(_fused(case, code, alpha), x, w, b, cot)
        want = _values_and_grads(pair, x, w, b, cot)
    for name, a, e in zip(("y", "dx", "dkernel", "dbias"), got, want):
        np.testing.assert_array_equal(a, e, err_msg=name)


def test_device_without_the_fused_kernels_runs_the_pair():
    cpu = devices.get_device("cpu")
    bare = devices.Device("cpu", np.float32,
                          {k: v for k, v in cpu.kernels.items() if k not in conv_pool.KERNELS},
                          cpu.native_kernel_names)
    x, w, b, rng = _problem(CASES[1], 3)
    op = REGISTRY["conv2d_maxpool2d"]
    attrs = dict(strides=(1, 1), padding="valid", dilation_rate=(1, 1), activation=codes.RELU,
                 alpha=0.0, pool_size=(3, 3))
    results = []
    for dev in (cpu, bare):
        with fkeras.GradientTape():  # recording: the forwards save their indices
            y, saved = op.forward(dev, x, w, b, **attrs)
        assert saved[0] == ("fused" if dev is cpu else "pair")
        cot = np.random.default_rng(4).standard_normal(y.shape).astype(np.float32)
        results.append([y, *op.backward(dev, saved, cot, (True, True, True), **attrs)])
    for a, e in zip(*results):
        np.testing.assert_array_equal(a, e)


def test_inference_skips_the_indices(monkeypatch):
    # No tape: the kernel is called without indices (values only), the same y.
    seen = []
    cpu = devices.get_device("cpu")
    kernel = cpu.kernels["conv2d_forward_maxpool2d"]
    monkeypatch.setitem(cpu.kernels, "conv2d_forward_maxpool2d",
                        lambda *a: seen.append(a[-1]) or kernel(*a))
    x, w, b, _ = _problem(CASES[0])
    with fkeras.device("cpu"):  # a host device (others always allocate them)
        y = np.asarray(_fused(CASES[0], codes.RELU, 0.0)(x, w, b))
        want = np.asarray(_pair(CASES[0], codes.RELU, 0.0)(x, w, b))
    assert seen == [None]
    np.testing.assert_array_equal(y, want)


def test_symbolic_shape_and_errors():
    out = conv_pool.conv2d_maxpool2d(KerasTensor((None, 9, 11, 3)), KerasTensor((3, 3, 3, 8)),
                                     None, pool_size=2)
    assert out.shape == (None, 3, 4, 8)
    x, w = np.zeros((1, 6, 6, 2), np.float32), np.zeros((3, 3, 2, 16), np.float32)
    with pytest.raises(ValueError, match="conv2d_maxpool2d.*activation"):
        conv_pool.conv2d_maxpool2d(x, w, activation=codes.TANH)
    with pytest.raises(ValueError, match="conv2d_maxpool2d.*alpha"):
        conv_pool.conv2d_maxpool2d(x, w, activation=codes.LEAKY_RELU, alpha=-0.1)
    with pytest.raises(ValueError, match="rank-4"):
        conv_pool.conv2d_maxpool2d(np.zeros((1, 6, 2), np.float32), w)
    with pytest.raises(ValueError, match="zero or negative"):
        conv_pool.conv2d_maxpool2d(x, w, pool_size=5)
