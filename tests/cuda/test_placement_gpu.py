"""Placement on a real GPU: DeviceArray views and the buffer protocol's kernels, whole fits
on the cuda device against the cpu, device memory flat over a long fit.

Marked `cuda`: skipped without a GPU (tests/conftest.py); run by tools/gpu_check.sh. The same
placement logic runs in CI on the host emulation (test_placement_emulated.py); these tests add
the CUDA kernels' own rounding, hence tolerances instead of bit equality.
"""

import numpy as np
import pytest

import fkeras as keras
from fkeras.ops import device_dispatch

import placement_models as pm

pytestmark = pytest.mark.cuda

DTYPES = ["float32", "int32", "int64", "float64", "bool", "uint8"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_views_share_the_block(gpu, dtype):
    host = (np.arange(24) % 7).astype(dtype).reshape(4, 6)
    a = gpu.DeviceArray.from_host(host)
    assert a.dtype == np.dtype(dtype)
    flat = a.reshape(-1)
    assert flat.shape == (24,) and flat.block_ptr == a.block_ptr
    np.testing.assert_array_equal(a[1:3].to_host(), host[1:3])
    np.testing.assert_array_equal(a[-1].to_host(), host[-1])
    np.testing.assert_array_equal(a[np.int64(2)].to_host(), host[2])
    np.testing.assert_array_equal(flat[5:11].reshape(2, 3).to_host(), host.reshape(-1)[5:11]
                                  .reshape(2, 3))
    a[1:2] = np.ones((1, 6), dtype)
    a[3] = 0
    expected = host.copy()
    expected[1:2], expected[3] = 1, 0
    np.testing.assert_array_equal(a.to_host(), expected)
    b = gpu.DeviceArray.zeros((2, 6), dtype)
    b[...] = a[0:2]
    np.testing.assert_array_equal(b.to_host(), expected[:2])
    del a, flat  # the views keep the block alive
    np.testing.assert_array_equal(b.to_host(), expected[:2])


def test_scalar_arrays_take_assignments(gpu):
    s = gpu.DeviceArray.zeros((), "float32")
    s[...] = 3.0
    assert s.to_host() == 3.0
    s[...] = np.float32(2.0)
    s[...] = gpu.DeviceArray.from_host(np.array(5.0, np.float32))
    assert s.shape == () and s.to_host() == 5.0
    with pytest.raises(TypeError):
        s[0]


@pytest.mark.parametrize("bad, error", [
    (lambda a: a.reshape(5, 5), ValueError),
    (lambda a: a.reshape(-1, -1), ValueError),
    (lambda a: a[::2], TypeError),
    (lambda a: a[4], IndexError),
    (lambda a: a[(0, 1)], TypeError),
    (lambda a: np.asarray(a), TypeError),
])
def test_view_errors(gpu, bad, error):
    a = gpu.DeviceArray.from_host(np.zeros((4, 6), np.float32))
    with pytest.raises(error):
        bad(a)


@pytest.mark.parametrize("n", [1, 7, 33, 1000, 1 << 20])
def test_protocol_kernels(gpu, n):
    rng = np.random.default_rng(n)
    x = rng.normal(size=n).astype(np.float32)
    y = rng.normal(size=n).astype(np.float32)
    dev = keras.backend.get_device("cuda")
    a, b = dev.asarray(x), dev.asarray(y)
    np.testing.assert_array_equal(dev.add(a, b).to_host(), x + y)
    np.testing.assert_array_equal(dev.axpby(a, b, 0.9, 0.1).to_host(),
                                  x * np.float32(0.9) + y * np.float32(0.1))
    np.testing.assert_array_equal(dev.scale(a, 3.0).to_host(), x * np.float32(3.0))
    s = dev.sum_scaled(a, 0.5)
    assert s.shape == ()
    np.testing.assert_allclose(s.to_host(), 0.5 * x.astype(np.float64).sum(), rtol=1e-6,
                               atol=1e-6)
    assert dev.sum_scaled(a, 0.5).to_host() == s.to_host()  # deterministic
    full = dev.broadcast_scalar((3, 2), s, 2.0).to_host()
    np.testing.assert_array_equal(full, np.full((3, 2), np.float32(2.0 * float(s.to_host()))))
    ones = dev.ones_like(a)
    assert np.all(ones.to_host() == 1)


@pytest.mark.parametrize("name", ["cnn_bn", "lstm"])
def test_fifty_steps_equal_the_cpu(gpu, name):
    kwargs = dict(epochs=13, batch_size=16, optimizer=lambda: keras.optimizers.SGD(0.05))
    ref = pm.fit_on("cpu", name, **kwargs)  # 4 steps per epoch: 52 steps
    got = pm.fit_on("cuda", name, **kwargs)
    for a, b in zip(ref[0].get_weights(), got[0].get_weights()):
        np.testing.assert_allclose(b, a, rtol=2e-3, atol=2e-4)
    np.testing.assert_allclose(got[1]["loss"], ref[1]["loss"], rtol=1e-3)
    np.testing.assert_allclose(got[3], ref[3], rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("name", pm.NO_HOST_OPS)
def test_models_fit_on_the_gpu_without_host_ops(gpu, name):
    device_dispatch.reset_host_op_calls()
    ref = pm.fit_on("cpu", name, epochs=1)
    got = pm.fit_on("cuda", name, epochs=1)
    assert device_dispatch.host_op_calls() == {}
    for a, b in zip(ref[0].get_weights(), got[0].get_weights()):
        np.testing.assert_allclose(b, a, rtol=1e-2, atol=1e-3)


def test_memory_is_flat_over_200_steps(gpu):
    x, y = pm.data("cnn_bn", n=16)
    with keras.device("cuda"):
        model = pm.build("cnn_bn")
        model.fit(x, y, batch_size=16, epochs=20, verbose=0)
        before = gpu.memory_stats()
        model.fit(x, y, batch_size=16, epochs=200, verbose=0)
        after = gpu.memory_stats()
    assert after["cuda_malloc_count"] == before["cuda_malloc_count"]
    assert after["allocated_bytes"] <= before["allocated_bytes"]
