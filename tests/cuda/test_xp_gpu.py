"""fkeras._C_cuda's array namespace kernels (xp_*) and `CudaXP` against NumPy (needs a GPU).

Outputs of the raw kernels are pre-filled with NaN on the device, so a kernel that skips an
element fails. Sizes 1, 7, 33, 1000 and broadcast patterns; reductions on shapes that take
each of the kernel's plans (columns: a thread per output, rows: a block per output, each
with and without chunked partials; tests/cuda/test_xp_math_host.py checks which shape takes
which plan). Run by
tools/gpu_check.sh (`pytest -m cuda`); skipped without a GPU.
"""

import numpy as np
import pytest

from fkeras.backend.cuda_xp import BINARY, REDUCE, UNARY

pytestmark = pytest.mark.cuda

SIZES = [1, 7, 33, 1000]
BROADCASTS = [((7,), (7,)), ((33, 1), (1, 7)), ((4, 33), (33,)), ((2, 1, 1000), (3, 1)),
              ((1000,), ()), ((), (33,)), ((5, 1, 6, 1), (1, 7, 1, 9)), ((0, 7), (7,))]


def _nan(gpu, shape):
    return gpu.DeviceArray.from_host(np.full(shape, np.nan, np.float32))


def _up(gpu, a):
    return gpu.DeviceArray.from_host(np.ascontiguousarray(a, np.float32))


def _rand(shape, seed, positive=False):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return np.abs(x) + np.float32(0.5) if positive else x


@pytest.fixture
def xp(gpu, monkeypatch):
    from fkeras.backend import devices

    monkeypatch.setattr(devices, "_devices", {k: v for k, v in devices._devices.items()
                                               if k != "cuda"})
    return devices.get_device("cuda").xp


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("sa, sb", BROADCASTS)
def test_binary_kernel_equals_numpy(gpu, name, sa, sb):
    a, b = _rand(sa, 1, positive=name == "power"), _rand(sb, 2)
    if a.size > 2 and b.size > 2:
        a.reshape(-1)[:2] = [np.nan, 0.0]
        b.reshape(-1)[1:3] = [np.nan, 1.0]
    out_shape = np.broadcast_shapes(sa, sb)
    out = _nan(gpu, out_shape)
    gpu.xp_binary(out, _up(gpu, a), _up(gpu, b), BINARY[name])
    got = out.to_host()
    with np.errstate(all="ignore"):
        want = np.broadcast_to(a, out_shape) if name == "first" else getattr(np, name)(a, b)
    if name == "power":  # CUDA powf: within 2 ulp of the float64 value
        with np.errstate(all="ignore"):
            ref = np.power(a.astype(np.float64), b.astype(np.float64))
        np.testing.assert_allclose(got, ref, rtol=3e-7, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, np.asarray(want, np.float32))


@pytest.mark.parametrize("n", SIZES)
def test_binary_scalar_operands(gpu, n):
    a = _rand((n,), n)
    out = _nan(gpu, (n,))
    gpu.xp_binary(out, 2.5, _up(gpu, a), BINARY["subtract"])
    np.testing.assert_array_equal(out.to_host(), np.float32(2.5) - a)
    gpu.xp_binary(out, _up(gpu, a), 3.0, BINARY["divide"])
    np.testing.assert_array_equal(out.to_host(), a / np.float32(3.0))


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("n", SIZES)
def test_unary_kernel_equals_numpy(gpu, name, n):
    x = _rand((n,), n + 5, positive=name in ("sqrt", "log")) * 3
    x[: min(n, 2)] = [np.nan, 0.0][: min(n, 2)]
    out = _nan(gpu, (n,))
    gpu.xp_unary(out, _up(gpu, x), UNARY[name])
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x)
        ref = getattr(np, name)(x.astype(np.float64))
    if name in ("exp", "log"):  # CUDA expf/logf: <= 2 ulp
        np.testing.assert_allclose(out.to_host(), ref, rtol=3e-7, equal_nan=True)
    else:
        np.testing.assert_array_equal(out.to_host(), want)


REDUCTIONS = [((1,), (0,)), ((7,), (0,)), ((33,), (0,)), ((1000,), (0,)), ((1 << 20,), (0,)),
              ((3, 100000), (1,)), ((64, 4096), (0,)), ((4096, 64), (0,)), ((4096, 64), (1,)),
              ((33, 7, 1000), (0, 2)), ((7, 33, 5), (1,)), ((2, 3, 4, 5), (1, 3)),
              ((3, 0, 4), (1,)), ((33, 7), ()), ((100000, 3), (0,)), ((640, 4096), (0,)),
              ((8, 70, 70, 16), (1, 2))]


@pytest.mark.filterwarnings("ignore:Mean of empty slice")
@pytest.mark.parametrize("name", sorted(REDUCE))
@pytest.mark.parametrize("shape, axes", REDUCTIONS)
def test_reduce_kernel_equals_float64(gpu, name, shape, axes):
    x = _rand(shape, len(shape) * 3 + sum(axes)) * 4 + 1
    n_red = int(np.prod([shape[a] for a in axes])) if axes else 1
    kept = [d for i, d in enumerate(shape) if i not in axes]
    out = _nan(gpu, kept)
    if n_red == 0 and name in ("max", "min"):
        with pytest.raises(ValueError, match="no identity"):
            gpu.xp_reduce(out, _up(gpu, x), REDUCE[name], list(axes))
        return
    gpu.xp_reduce(out, _up(gpu, x), REDUCE[name], list(axes))
    with np.errstate(all="ignore"):
        ref = getattr(np, name)(x.astype(np.float64), axis=tuple(axes))
    # float64 accumulation in the kernel's order: at most one float32 ulp from NumPy's
    np.testing.assert_allclose(out.to_host(), np.asarray(ref, np.float32), rtol=2.4e-7,
                               equal_nan=True)


def test_reduce_is_deterministic_and_propagates_nan(gpu):
    x = _rand((3, 300000), 9)
    out1, out2 = _nan(gpu, (3,)), _nan(gpu, (3,))
    gpu.xp_reduce(out1, _up(gpu, x), REDUCE["sum"], [1])
    gpu.xp_reduce(out2, _up(gpu, x), REDUCE["sum"], [1])
    np.testing.assert_array_equal(out1.to_host(), out2.to_host())
    x[1, 123456] = np.nan
    for name in ("sum", "max", "min"):
        gpu.xp_reduce(out1, _up(gpu, x), REDUCE[name], [1])
        got = out1.to_host()
        assert np.isnan(got[1]) and not np.isnan(got[0]) and not np.isnan(got[2])


@pytest.mark.parametrize("rows, cols", [(1, 1), (7, 33), (33, 7), (1000, 3), (3, 1000)])
@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8"])
def test_copy2d_into_a_column_block(gpu, rows, cols, dtype):
    src = (np.arange(rows * cols) % 251).astype(dtype).reshape(rows, cols)
    dst_host = np.full((rows, cols + 5), 7, dtype)
    dst = gpu.DeviceArray.from_host(dst_host)
    gpu.xp_copy2d(dst, 2, cols + 5, gpu.DeviceArray.from_host(src), 0, cols, rows, cols)
    dst_host[:, 2:2 + cols] = src
    np.testing.assert_array_equal(dst.to_host(), dst_host)
    with pytest.raises(ValueError, match="does not fit"):
        gpu.xp_copy2d(dst, 6, cols + 5, gpu.DeviceArray.from_host(src), 0, cols, rows, cols)


def test_where_kernel(gpu):
    cond = _rand((33, 1), 4) > 0
    x, y = _rand((1, 7), 5), _rand((33, 7), 6)
    out = _nan(gpu, (33, 7))
    gpu.xp_where(out, gpu.DeviceArray.from_host(cond), _up(gpu, x), _up(gpu, y))
    np.testing.assert_array_equal(out.to_host(), np.where(cond, x, y))
    gpu.xp_where(out, _up(gpu, cond.astype(np.float32)), 0.5, _up(gpu, y))
    np.testing.assert_array_equal(out.to_host(), np.where(cond, np.float32(0.5), y))


def test_bindings_check_arguments(gpu):
    a = _up(gpu, np.ones((2, 3)))
    with pytest.raises(ValueError, match="broadcast"):
        gpu.xp_binary(_nan(gpu, (2, 3)), a, _up(gpu, np.ones(4)), BINARY["add"])
    with pytest.raises(ValueError, match="op"):
        gpu.xp_unary(_nan(gpu, (2, 3)), a, 99)
    with pytest.raises(ValueError, match="float32"):
        gpu.xp_unary(_nan(gpu, (2, 3)), gpu.DeviceArray.from_host(np.ones((2, 3), np.int32)), 0)
    with pytest.raises(ValueError, match="out of bounds"):
        gpu.xp_reduce(_nan(gpu, (2,)), a, REDUCE["sum"], [2])
    with pytest.raises(ValueError, match="elements"):
        gpu.xp_reduce(_nan(gpu, (3,)), a, REDUCE["sum"], [1])


@pytest.mark.parametrize("n", SIZES)
def test_namespace_functions(xp, n):
    a, b = _rand((n, 3), n), _rand((3,), n + 1)
    da, db = xp.asarray(xp._dev.asarray(a)), xp._dev.asarray(b)
    np.testing.assert_array_equal(xp.multiply(da, db).to_host(), a * b)
    np.testing.assert_allclose(xp.mean(da, axis=0, keepdims=True).to_host(),
                               a.astype(np.float64).mean(axis=0, keepdims=True), rtol=1e-7)
    cat = xp.concatenate([da, da], axis=-1)
    np.testing.assert_array_equal(cat.to_host(), np.concatenate([a, a], axis=-1))
    left, right = xp.split(cat, [3], axis=1)
    np.testing.assert_array_equal(left.to_host(), a)
    np.testing.assert_array_equal(right.to_host(), a)
    np.testing.assert_array_equal(xp.broadcast_to(db, (n, 3)).to_host(),
                                  np.broadcast_to(b, (n, 3)))
