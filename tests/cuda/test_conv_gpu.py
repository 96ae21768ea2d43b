"""CUDA conv2d and pooling kernels (fkeras._C_cuda) against the CPU kernels (fkeras._C) on
random NHWC shapes with strides, dilations, asymmetric padding and groups, outputs pre-filled
with NaN; the tiled conv kernels also on edge sizes (1, 7, 33), several row / column / depth
tiles, split-K weight gradients, NaN inputs and TF32 ("high" precision). Skipped without a GPU
(the `cuda` marker)."""

import numpy as np
import pytest
from fkeras import _C
from fkeras.backend import codes

pytestmark = pytest.mark.cuda


@pytest.fixture
def G():
    import fkeras._C_cuda as G

    G.set_matmul_precision("highest")
    yield G
    G.set_matmul_precision("highest")


def dev(G, a, dtype=np.float32):
    return G.DeviceArray.from_host(np.ascontiguousarray(a, dtype))


def out_size(H, R, st, dil, lo, hi):
    return max((H + lo + hi - dil * (R - 1) - 1) // st + 1, 0)


def conv_cases():
    rng = np.random.default_rng(0)
    out = [(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1), (2, 33, 7, 3, 33, 3, 3, 1, 1, 1, 1, 1, 1, 1)]
    for _ in range(10):
        groups = int(rng.choice([1, 1, 2, 4]))
        out.append((int(rng.integers(1, 4)), int(rng.integers(1, 20)), int(rng.integers(1, 20)),
                    groups * int(rng.integers(1, 9)), groups * int(rng.integers(1, 9)),
                    int(rng.integers(1, 4)), int(rng.integers(1, 4)), int(rng.integers(1, 3)),
                    int(rng.integers(1, 3)), int(rng.integers(1, 3)), int(rng.integers(1, 3)),
                    int(rng.integers(0, 3)), int(rng.integers(0, 3)), groups))
    return out


@pytest.mark.parametrize("case", conv_cases())
def test_conv_vs_cpu(G, case):
    N, H, W, C, K, R, S, sh, sw, dh, dw, pt, pl, groups = case
    P, Q = out_size(H, R, sh, dh, pt, 1), out_size(W, S, sw, dw, pl, 0)
    geo = (N, H, W, C, K, R, S, P, Q, sh, sw, dh, dw, pt, pl, groups)
    rng = np.random.default_rng(sum(case))
    x = rng.standard_normal((N, H, W, C)).astype(np.float32)
    w = rng.standard_normal((R, S, C // groups, K)).astype(np.float32)
    b = rng.standard_normal(K).astype(np.float32)
    dy = rng.standard_normal((N, P, Q, K)).astype(np.float32)
    for act in (codes.LINEAR, codes.RELU, codes.TANH):
        want = np.full((N, P, Q, K), np.nan, np.float32)
        _C.conv2d_forward(want, x, w, b, *geo, act, 0.0)
        y = dev(G, np.full(want.shape, np.nan))
        G.conv2d_forward(y, dev(G, x), dev(G, w), dev(G, b), *geo, act, 0.0)
        np.testing.assert_allclose(y.to_host(), want, rtol=1e-4, atol=1e-4)
    want = np.full(x.shape, np.nan, np.float32)
    _C.conv2d_backward_input(want, dy, w, *geo)
    dx = dev(G, np.full(x.shape, np.nan))
    G.conv2d_backward_input(dx, dev(G, dy), dev(G, w), *geo)
    np.testing.assert_allclose(dx.to_host(), want, rtol=1e-4, atol=1e-4)
    want = np.full(w.shape, np.nan, np.float32)
    _C.conv2d_backward_weight(want, dy, x, *geo)
    dwd = dev(G, np.full(w.shape, np.nan))
    G.conv2d_backward_weight(dwd, dev(G, dy), dev(G, x), *geo)
    np.testing.assert_allclose(dwd.to_host(), want, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("N,H,W,C,R,S,sh,sw,pt,pl", [(1, 1, 1, 1, 1, 1, 1, 1, 0, 0),
                                                      (2, 7, 9, 3, 2, 2, 2, 2, 0, 0),
                                                      (3, 33, 17, 5, 3, 3, 1, 2, 1, 1),
                                                      (1, 8, 8, 1000, 3, 2, 2, 1, 1, 0)])
def test_pooling_vs_cpu(G, N, H, W, C, R, S, sh, sw, pt, pl):
    P, Q = out_size(H, R, sh, 1, pt, pt), out_size(W, S, sw, 1, pl, pl)
    rng = np.random.default_rng(H * W)
    x = rng.standard_normal((N, H, W, C)).astype(np.float32)
    x.flat[::7] = np.nan if H > 1 else x.flat[::7]
    dy = rng.standard_normal((N, P, Q, C)).astype(np.float32)
    geo = (N, H, W, C, P, Q, R, S, sh, sw, pt, pl)
    y_c, i_c = np.full((N, P, Q, C), np.nan, np.float32), np.zeros((N, P, Q, C), np.int64)
    _C.maxpool2d_forward(y_c, i_c, x, *geo)
    y, idx = dev(G, np.full(y_c.shape, np.nan)), dev(G, np.full(y_c.shape, -5), np.int64)
    G.maxpool2d_forward(y, idx, dev(G, x), *geo)
    np.testing.assert_array_equal(y.to_host(), y_c)
    np.testing.assert_array_equal(idx.to_host(), i_c)
    dx_c = np.full(x.shape, np.nan, np.float32)
    _C.maxpool2d_backward(dx_c, dy, i_c, N, H, W, C, P, Q)
    dx = dev(G, np.full(x.shape, np.nan))
    G.maxpool2d_backward(dx, dev(G, dy), idx, N, H, W, C, P, Q)
    np.testing.assert_array_equal(dx.to_host(), dx_c)
    x = np.nan_to_num(x)
    _C.avgpool2d_forward(y_c, x, *geo)
    G.avgpool2d_forward(y, dev(G, x), *geo)
    np.testing.assert_allclose(y.to_host(), y_c, rtol=1e-6, atol=1e-6)
    _C.avgpool2d_backward(dx_c, dy, *geo)
    G.avgpool2d_backward(dx, dev(G, dy), *geo)
    np.testing.assert_allclose(dx.to_host(), dx_c, rtol=1e-6, atol=1e-6)


def test_maxpool_backward_rejects_foreign_index(G):
    dx, dy = dev(G, np.zeros((1, 2, 2, 2))), dev(G, np.ones((1, 1, 1, 2)))
    idx = dev(G, np.array([[[[0, 0]]]]), np.int64)  # channel 1 pointing at channel 0
    with pytest.raises(ValueError, match="indices"):
        G.maxpool2d_backward(dx, dy, idx, 1, 2, 2, 2, 1, 1)


def test_conv_rejects_bad_groups(G):
    x, w, y = dev(G, np.ones((1, 3, 3, 3))), dev(G, np.ones((1, 1, 1, 4))), dev(G, np.ones((1, 3, 3, 4)))
    with pytest.raises(ValueError, match="groups"):
        G.conv2d_forward(y, x, w, None, 1, 3, 3, 3, 4, 1, 1, 3, 3, 1, 1, 1, 1, 0, 0, 2, 0, 0.0)


# (N, H, W, C, K, R, S, sh, sw, dh, dw, pt, pl, groups): edge sizes 1 / 7 / 33, stride 2,
# dilation 2, groups 2, several row / column / depth tiles (K = 130, N*P*Q > 128, R*S*C > 8),
# split-K weight gradients (N*P*Q >= 512), channels that are not multiples of 4.
TILED = [(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1),
         (1, 7, 7, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1),
         (2, 33, 33, 8, 130, 3, 3, 1, 1, 1, 1, 1, 1, 1),
         (3, 33, 7, 6, 10, 3, 3, 2, 2, 2, 2, 2, 1, 2),
         (2, 17, 19, 16, 32, 3, 3, 2, 1, 1, 2, 1, 2, 2),
         (8, 16, 16, 32, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1),
         (4, 9, 9, 64, 64, 1, 1, 1, 1, 1, 1, 0, 0, 64),
         (1, 33, 1, 3, 5, 7, 1, 2, 1, 1, 1, 3, 0, 1),
         (2, 5, 5, 4, 4, 5, 5, 1, 1, 2, 2, 4, 4, 1)]


def _run_all(G, geo, x, w, b, dy, act=codes.LINEAR):
    N, H, W, C, K, R, S, P, Q = geo[:9]
    y = dev(G, np.full((N, P, Q, K), np.nan))
    G.conv2d_forward(y, dev(G, x), dev(G, w), None if b is None else dev(G, b), *geo, act, 0.0)
    dx = dev(G, np.full(x.shape, np.nan))
    G.conv2d_backward_input(dx, dev(G, dy), dev(G, w), *geo)
    dwd = dev(G, np.full(w.shape, np.nan))
    G.conv2d_backward_weight(dwd, dev(G, dy), dev(G, x), *geo)
    return y.to_host(), dx.to_host(), dwd.to_host()


def _cpu_all(geo, x, w, b, dy, act=codes.LINEAR):
    N, H, W, C, K, R, S, P, Q = geo[:9]
    y = np.full((N, P, Q, K), np.nan, np.float32)
    _C.conv2d_forward(y, x, w, b, *geo, act, 0.0)
    dx = np.full(x.shape, np.nan, np.float32)
    _C.conv2d_backward_input(dx, dy, w, *geo)
    dwc = np.full(w.shape, np.nan, np.float32)
    _C.conv2d_backward_weight(dwc, dy, x, *geo)
    return y, dx, dwc


def _geo(case):
    N, H, W, C, K, R, S, sh, sw, dh, dw, pt, pl, groups = case
    P, Q = out_size(H, R, sh, dh, pt, pt), out_size(W, S, sw, dw, pl, pl)
    return (N, H, W, C, K, R, S, P, Q, sh, sw, dh, dw, pt, pl, groups)


def _data(geo, seed):
    N, H, W, C, K, R, S, P, Q = geo[:9]
    rng = np.random.default_rng(seed)
    f = np.float32
    return (rng.standard_normal((N, H, W, C)).astype(f),
            rng.standard_normal((R, S, C // geo[15], K)).astype(f),
            rng.standard_normal(K).astype(f), rng.standard_normal((N, P, Q, K)).astype(f))


def _close(got, want, depth, rel):
    """Within rel * sqrt(depth) * (|want| + sqrt(depth)): rounding over a depth-long sum of
    products of unit-scale normals (FP32: rel = 1e-6, about 16 ulp; TF32: 1e-3, its 10-bit
    mantissa), far below what one wrong tap or channel would change."""
    assert not np.isnan(got).any()
    n = max(depth, 1)
    bound = rel * np.sqrt(n) * (np.abs(want) + np.sqrt(n))
    assert (np.abs(got - want) <= bound).all(), float(np.max(np.abs(got - want) / bound))


@pytest.mark.parametrize("precision", ["highest", "high"])
@pytest.mark.parametrize("case", TILED)
def test_tiled_conv_vs_cpu(G, case, precision):
    G.set_matmul_precision(precision)
    geo = _geo(case)
    N, H, W, C, K, R, S, P, Q = geo[:9]
    x, w, b, dy = _data(geo, sum(case))
    got = _run_all(G, geo, x, w, b, dy, codes.RELU)
    want = _cpu_all(geo, x, w, b, dy, codes.RELU)
    rel = 1e-6 if precision == "highest" else 1e-3
    groups = geo[15]
    depths = (R * S * C // groups, R * S * K // groups, N * P * Q)
    for g_, w_, d in zip(got, want, depths):
        _close(g_, w_, d, rel)


def test_tiled_conv_is_deterministic(G):
    geo = _geo(TILED[5])
    x, w, b, dy = _data(geo, 5)
    first = _run_all(G, geo, x, w, b, dy)
    again = _run_all(G, geo, x, w, b, dy)
    for a, c in zip(first, again):
        np.testing.assert_array_equal(a, c)


def test_tiled_conv_propagates_nan(G):
    geo = _geo((2, 9, 9, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1))
    x, w, b, dy = _data(geo, 3)
    x[1, 4, 4, 2] = np.nan
    dy[0, 2, 2, 5] = np.nan
    y, dx, dwd = _run_all(G, geo, x, w, b, dy)
    yc, dxc, dwc = _cpu_all(geo, x, w, b, dy)
    for got, want in ((y, yc), (dx, dxc), (dwd, dwc)):
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        assert np.isnan(got).any()
        ok = ~np.isnan(want)
        np.testing.assert_allclose(got[ok], want[ok], rtol=1e-4, atol=1e-4)


def test_strided_input_gradient_nan_weight_stays_in_its_phase(G):
    """Stride 2: a NaN weight at tap (0, 0) reaches only the dx rows of that tap's stride phase
    (h, w odd here): every element the CPU makes NaN, plus border ones whose tap falls outside
    dy (0 * NaN, where the CPU's gather skips the tap); all others equal the CPU."""
    geo = _geo((2, 9, 10, 4, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1))
    x, w, b, dy = _data(geo, 4)
    w[0, 0, 1, 3] = np.nan
    dx = dev(G, np.full(x.shape, np.nan))
    G.conv2d_backward_input(dx, dev(G, dy), dev(G, w), *geo)
    want = np.full(x.shape, np.nan, np.float32)
    _C.conv2d_backward_input(want, dy, w, *geo)
    got = dx.to_host()
    assert np.isnan(got[np.isnan(want)]).all()
    phase = np.zeros(x.shape, bool)
    phase[:, 1::2, 1::2, 1] = True
    assert not np.isnan(got[~phase]).any()
    ok = ~np.isnan(got)
    np.testing.assert_allclose(got[ok], want[ok], rtol=1e-4, atol=1e-4)


def test_tiled_conv_rejects_int32_overflow(G):
    x, w, y = (dev(G, np.ones((1, 1, 1, 1))) for _ in range(3))
    with pytest.raises(ValueError, match="too large"):
        G.conv2d_forward(y, x, w, None, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2**31, 1, 1, 1, 0, 0, 1, 0, 0.0)
