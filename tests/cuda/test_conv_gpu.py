"""CUDA conv2d and pooling kernels (fkeras._C_cuda) against the CPU kernels (fkeras._C) on
random NHWC shapes with strides, dilations, asymmetric padding and groups, outputs pre-filled
with NaN. Skipped without a GPU (the `cuda` marker)."""

import numpy as np
import pytest
from fkeras import _C
from fkeras.backend import codes

pytestmark = pytest.mark.cuda


@pytest.fixture
def G():
    import fkeras._C_cuda as G

    return G


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
