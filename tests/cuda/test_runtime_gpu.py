"""The CUDA runtime on a GPU: DeviceArray round trips, the caching allocator, the stream.

Marked `cuda`: skipped without a GPU (tests/conftest.py); run by tools/gpu_check.sh.
"""

import numpy as np
import pytest

pytestmark = pytest.mark.cuda

DTYPES = ["float32", "int32", "int64"]
SHAPES = [(), (0,), (1,), (7,), (33, 5), (2, 0, 3), (1000, 3), (4, 5, 6, 7)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_round_trip(gpu, dtype, shape):
    rng = np.random.default_rng(0)
    host = (rng.standard_normal(shape) * 1000).astype(dtype)
    a = gpu.DeviceArray.from_host(host)
    assert a.shape == shape and a.dtype == dtype and a.nbytes == host.nbytes
    back = a.to_host()
    assert back.dtype == host.dtype and back.shape == shape
    np.testing.assert_array_equal(back, host)
    host2 = (host + 1).astype(dtype)
    a.copy_from_host(host2)
    np.testing.assert_array_equal(a.to_host(), host2)


def test_nan_and_inf_survive(gpu):
    host = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45], np.float32)
    back = gpu.DeviceArray.from_host(host).to_host()
    assert np.array_equal(back, host, equal_nan=True)
    assert np.signbit(back[3])


def test_non_contiguous_and_other_dtypes(gpu):
    host = np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2]
    np.testing.assert_array_equal(gpu.DeviceArray.from_host(host).to_host(), host)
    with pytest.raises(ValueError, match="dtype must be float32, int32 or int64"):
        gpu.DeviceArray.from_host(np.ones(3, np.float64))
    with pytest.raises(ValueError, match="dtype must be one of"):
        gpu.DeviceArray((3,), "float16")
    with pytest.raises(ValueError, match=">= 0"):
        gpu.DeviceArray((3, -1))


def test_copy_from_host_checks_shape_and_dtype(gpu):
    a = gpu.DeviceArray((2, 3))
    with pytest.raises(ValueError, match="shape"):
        a.copy_from_host(np.ones((3, 2), np.float32))
    with pytest.raises(ValueError, match="dtype"):
        a.copy_from_host(np.ones((2, 3), np.int32))


def test_zeros(gpu):
    for dt in DTYPES:
        np.testing.assert_array_equal(gpu.DeviceArray.zeros((5, 3), dt).to_host(),
                                      np.zeros((5, 3), dt))


def test_cuda_array_interface(gpu):
    a = gpu.DeviceArray((3, 4), "int64")
    cai = a.__cuda_array_interface__
    assert cai["version"] == 3 and cai["shape"] == (3, 4) and cai["typestr"] == "<i8"
    assert cai["data"] == (a.ptr, False) and cai["strides"] is None
    assert cai["stream"] == gpu.stream_handle() != 0
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = torch.as_tensor(gpu.DeviceArray.from_host(host), device="cuda")
    np.testing.assert_array_equal(t.cpu().numpy(), host)


def test_upload_pinned(gpu):
    rng = np.random.default_rng(1)
    hosts = [rng.standard_normal((32, 784)).astype(np.float32),
             rng.integers(0, 10, 32).astype(np.int64), np.zeros((0,), np.float32),
             rng.integers(0, 5, (7, 3)).astype(np.int32)]
    outs = gpu.upload_pinned(hosts)
    assert len(outs) == len(hosts)
    for h, d in zip(hosts, outs):
        np.testing.assert_array_equal(d.to_host(), h)
    assert gpu.upload_pinned([]) == []


def test_allocator_is_flat_over_200_cycles(gpu):
    gpu.synchronize()
    shapes = [(32, 784), (784, 128), (128,), (32, 128), (32, 10), (10,)]
    for step in range(200):
        arrays = [gpu.DeviceArray(s) for s in shapes]
        del arrays
        if step == 0:
            warm = gpu.memory_stats()
    s = gpu.memory_stats()
    assert s["cuda_malloc_count"] == warm["cuda_malloc_count"]
    assert s["reserved_bytes"] == warm["reserved_bytes"]
    assert s["live_blocks"] == warm["live_blocks"]  # nothing from the loop stays live
    assert s["cache_hits"] >= warm["cache_hits"] + 199 * len(shapes)


def test_empty_cache_and_peak(gpu):
    a = gpu.DeviceArray((1 << 20,))
    del a
    assert gpu.memory_stats()["cached_bytes"] >= 4 << 20
    gpu.empty_cache()
    s = gpu.memory_stats()
    assert s["cached_bytes"] == 0 and s["reserved_bytes"] == s["allocated_bytes"]
    gpu.reset_peak_memory_stats()
    b = gpu.DeviceArray((1 << 18,))
    assert gpu.memory_stats()["peak_allocated_bytes"] >= b.nbytes


def test_stream_orders_copies_and_synchronize(gpu):
    n = 1 << 22
    host = np.arange(n, dtype=np.float32)
    a = gpu.DeviceArray.from_host(host)
    for k in range(5):  # queued copies on one stream complete in order
        a.copy_from_host(host + k)
    gpu.synchronize()
    np.testing.assert_array_equal(a.to_host(), host + 4)


def test_copy_bandwidth_is_positive(gpu):
    assert gpu.copy_bandwidth_gbs(1 << 24, 3) > 1.0


def test_cuda_device_placement(gpu):
    import fkeras

    dev = fkeras.backend.get_device("cuda")
    x = dev.asarray([[1.0, 2.0], [3.0, 4.0]])
    assert isinstance(x, gpu.DeviceArray) and x.dtype == "float32"
    assert dev.asarray(x) is x
    np.testing.assert_array_equal(dev.to_numpy(x), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(dev.to_numpy(dev.zeros((2, 3))), np.zeros((2, 3)))
    assert dev.empty(4).shape == (4,)
    assert dev.asarray(np.arange(3)).dtype == "int64"
    with fkeras.device("cuda:0") as d:
        assert d is dev
    for name, fn in dev.kernels.items():
        assert fn is getattr(gpu, name)
