"""Host build of the CUDA conv family's index maps (fk_cuda/conv_math.h via
fkeras._C_cuda_host): a conv2d computed as the kernel's implicit GEMM (rows (n, p, q), depth
(r, s, c) of the group, zero padding through the bounds predicates) and the input gradient
through the inverse map equal NumPy float64 convolutions and the CPU kernels on random shapes
with strides, dilations, asymmetric padding and groups."""

import numpy as np
import pytest
from fkeras import _C

H_ = pytest.importorskip("fkeras._C_cuda_host")


def numpy_conv(x, w, sh, sw, dh, dw, pt, pl, P, Q, groups):
    N, H, W, C = x.shape
    R, S, cg, K = w.shape
    kg = K // groups
    big = np.zeros((N, H + 2 * (pt + R * dh + P * sh), W + 2 * (pl + S * dw + Q * sw), C))
    big[:, pt:pt + H, pl:pl + W] = x
    y = np.zeros((N, P, Q, K))
    for r in range(R):
        for s in range(S):
            patch = big[:, r * dh:r * dh + P * sh:sh, s * dw:s * dw + Q * sw:sw][:, :P, :Q]
            for grp in range(groups):
                y[..., grp * kg:(grp + 1) * kg] += (
                    patch[..., grp * cg:(grp + 1) * cg] @ w[r, s, :, grp * kg:(grp + 1) * kg])
    return y


def cases():
    rng = np.random.default_rng(0)
    out = [(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1)]
    for _ in range(12):
        groups = int(rng.choice([1, 1, 2, 3]))
        C, K = groups * int(rng.integers(1, 4)), groups * int(rng.integers(1, 4))
        R, S = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        out.append((int(rng.integers(1, 3)), int(rng.integers(1, 9)), int(rng.integers(1, 9)), C,
                    K, R, S, int(rng.integers(1, 3)), int(rng.integers(1, 3)),
                    int(rng.integers(1, 3)), int(rng.integers(1, 3)), int(rng.integers(0, 3)),
                    int(rng.integers(0, 3)), groups))
    return out


def out_size(H, R, st, dil, pad_lo, pad_hi):
    return max((H + pad_lo + pad_hi - dil * (R - 1) - 1) // st + 1, 0)


@pytest.mark.parametrize("case", cases())
def test_implicit_gemm_maps_equal_numpy_and_cpu(case):
    N, H, W, C, K, R, S, sh, sw, dh, dw, pt, pl, groups = case
    P, Q = out_size(H, R, sh, dh, pt, 1), out_size(W, S, sw, dw, pl, 2)
    if P == 0 or Q == 0:
        pytest.skip("empty output")
    rng = np.random.default_rng(sum(case))
    x = rng.standard_normal((N, H, W, C))
    w = rng.standard_normal((R, S, C // groups, K))
    geo = (N, H, W, C, K, R, S, P, Q, sh, sw, dh, dw, pt, pl, groups)
    got = H_.conv2d_implicit_gemm_reference(x, w, *geo)
    want = numpy_conv(x, w, sh, sw, dh, dw, pt, pl, P, Q, groups)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    y32 = np.full((N, P, Q, K), np.nan, np.float32)
    _C.conv2d_forward(y32, x.astype(np.float32), w.astype(np.float32), None, *geo, 0, 0.0)
    np.testing.assert_allclose(y32, want, rtol=1e-4, atol=1e-4)
    # input gradient through the inverse map == CPU kernel == adjoint of the NumPy conv
    dy = rng.standard_normal((N, P, Q, K))
    dx = H_.conv2d_backward_input_reference(dy, w, *geo)
    dx32 = np.full((N, H, W, C), np.nan, np.float32)
    _C.conv2d_backward_input(dx32, dy.astype(np.float32), w.astype(np.float32), *geo)
    np.testing.assert_allclose(dx32, dx, rtol=1e-4, atol=1e-4)
    # <conv(x), dy> == <x, dx> (adjoint identity, float64)
    np.testing.assert_allclose(np.sum(want * dy), np.sum(x * dx), rtol=1e-10)


@pytest.mark.parametrize("o,R,stride,pad,H", [(0, 3, 1, 1, 5), (4, 3, 1, 1, 5), (2, 2, 2, 0, 5),
                                              (1, 3, 2, 1, 4), (0, 1, 1, 0, 1)])
def test_pool_window(o, R, stride, pad, H):
    t0, t1 = H_.pool_window(o, R, stride, pad, H)
    taps = [t for t in range(R) if 0 <= o * stride - pad + t < H]
    assert (t0, t1) == (taps[0], taps[-1] + 1)
