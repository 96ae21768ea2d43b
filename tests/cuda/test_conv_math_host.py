"""Host build of the CUDA conv family's index maps (fk_cuda/conv_math.h via
fkeras._C_cuda_host): a conv2d computed as the kernel's implicit GEMM (rows (n, p, q), depth
(r, s, c) of the group, zero padding through the bounds predicates) and the input gradient
through the inverse map equal NumPy float64 convolutions and the CPU kernels on random shapes
with strides, dilations, asymmetric padding and groups; and the tiled kernels' walk (conv.cu)
emulated through the same tile loaders: one k-step's shared tiles equal slices of the NumPy
im2col (and inverse-map) matrices, and the whole grid walk (split-K weight gradient included)
equals NumPy float64 convolutions and the CPU kernels."""

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


# ---- the tiled kernels' walk (conv.cu), emulated on the host through the same tile loaders ----

def im2col(x, geo, grp):
    """Forward GEMM operand A of group grp: rows (n, p, q), depth (r, s, c) (float64)."""
    N, H, W, C, K, R, S, P, Q, sh, sw, dh, dw, pt, pl, groups = geo
    cg = C // groups
    big = np.zeros((N, H + 2 * (pt + R * dh + P * sh), W + 2 * (pl + S * dw + Q * sw), C))
    big[:, pt:pt + H, pl:pl + W] = x
    cols = [big[:, r * dh:r * dh + P * sh:sh, s * dw:s * dw + Q * sw:sw][:, :P, :Q,
                grp * cg:(grp + 1) * cg] for r in range(R) for s in range(S)]
    return np.stack(cols, axis=3).reshape(N * P * Q, R * S * cg)


def dgrad_phase_matrices(dy, w, geo, z):
    """Input-gradient GEMM operands of job z = (group, stride phase): A rows (n, h, w) of the
    phase (h = f_h, f_h + sh, ...), depth (r, s, k) over the taps that reach the phase;
    B[(r, s, k), c] = w[r, s, c, grp*kg + k]."""
    N, H, W, C, K, R, S, P, Q, sh, sw, dh, dw, pt, pl, groups = geo
    kg = K // groups
    grp, ph = z % groups, z // groups
    fh, fw = ph % min(sh, H), ph // min(sh, H)
    hs, ws = range(fh, H, sh), range(fw, W, sw)
    rt = [r for r in range(R) if (fh + pt - r * dh) % sh == 0]
    st = [s for s in range(S) if (fw + pl - s * dw) % sw == 0]
    a = np.zeros((N, len(hs), len(ws), len(rt), len(st), kg))
    for ih, h in enumerate(hs):
        for iw, w_ in enumerate(ws):
            for ir, r in enumerate(rt):
                for js, s in enumerate(st):
                    p, q = (h + pt - r * dh) // sh, (w_ + pl - s * dw) // sw
                    if 0 <= p < P and 0 <= q < Q:
                        a[:, ih, iw, ir, js] = dy[:, p, q, grp * kg:(grp + 1) * kg]
    b = w[rt][:, st][..., grp * kg:(grp + 1) * kg].transpose(0, 1, 3, 2)
    depth = len(rt) * len(st) * kg
    return a.reshape(N * len(hs) * len(ws), depth), b.reshape(depth, C // groups)


def numpy_wgrad(x, dy, geo):
    N, H, W, C, K, R, S, P, Q, sh, sw, dh, dw, pt, pl, groups = geo
    cg, kg = C // groups, K // groups
    out = np.zeros((R * S * cg, K))
    for grp in range(groups):
        out[:, grp * kg:(grp + 1) * kg] = im2col(x, geo, grp).T @ dy.reshape(-1, K)[
            :, grp * kg:(grp + 1) * kg]
    return out.reshape(R, S, cg, K)


def tiled_cases():
    # (N, H, W, C, K, R, S, sh, sw, dh, dw, pt, pl, groups): edge sizes 1 / 7 / 33, several row,
    # column and depth tiles (K = 130, C*R*S > 8), stride 2, dilation 2, groups 2 and 3, split-K
    # weight gradients (N*P*Q >= 512), channels that are not multiples of 4 (scalar gathers).
    return [(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1),
            (1, 7, 7, 3, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1),
            (2, 12, 9, 8, 130, 3, 3, 1, 1, 1, 1, 1, 1, 1),
            (1, 33, 33, 4, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1),
            (2, 7, 33, 6, 4, 3, 2, 1, 2, 2, 2, 2, 1, 2),
            (4, 16, 16, 8, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1),
            (3, 11, 13, 9, 6, 2, 3, 2, 1, 1, 2, 0, 2, 3),
            (1, 5, 5, 24, 24, 1, 1, 1, 1, 1, 1, 0, 0, 24)]


def _geo(case):
    N, H, W, C, K, R, S, sh, sw, dh, dw, pt, pl, groups = case
    P, Q = out_size(H, R, sh, dh, pt, 1), out_size(W, S, sw, dw, pl, 1)
    return (N, H, W, C, K, R, S, P, Q, sh, sw, dh, dw, pt, pl, groups)


@pytest.mark.parametrize("case", tiled_cases())
def test_tiled_walk_equals_numpy_and_cpu(case):
    geo = _geo(case)
    N, H, W, C, K, R, S, P, Q, sh, sw, dh, dw, pt, pl, groups = geo
    rng = np.random.default_rng(sum(case))
    x = rng.standard_normal((N, H, W, C))
    w = rng.standard_normal((R, S, C // groups, K))
    b = rng.standard_normal(K)
    dy = rng.standard_normal((N, P, Q, K))
    y = H_.conv2d_forward_tiled(x, w, b, geo)
    np.testing.assert_allclose(y, numpy_conv(x, w, sh, sw, dh, dw, pt, pl, P, Q, groups) + b,
                               rtol=1e-12, atol=1e-12)
    dx = H_.conv2d_backward_input_tiled(dy, w, geo)
    np.testing.assert_allclose(dx, H_.conv2d_backward_input_reference(dy, w, *geo),
                               rtol=1e-12, atol=1e-12)
    dwt = H_.conv2d_backward_weight_tiled(dy, x, geo)
    np.testing.assert_allclose(dwt, numpy_wgrad(x, dy, geo), rtol=1e-12, atol=1e-11)
    # the CPU kernels agree (float32)
    f = np.float32
    y32 = np.full(y.shape, np.nan, f)
    _C.conv2d_forward(y32, x.astype(f), w.astype(f), b.astype(f), *geo, 0, 0.0)
    np.testing.assert_allclose(y32, y, rtol=1e-4, atol=1e-4)
    dx32 = np.full(dx.shape, np.nan, f)
    _C.conv2d_backward_input(dx32, dy.astype(f), w.astype(f), *geo)
    np.testing.assert_allclose(dx32, dx, rtol=1e-4, atol=1e-4)
    dw32 = np.full(dwt.shape, np.nan, f)
    _C.conv2d_backward_weight(dw32, dy.astype(f), x.astype(f), *geo)
    np.testing.assert_allclose(dw32, dwt, rtol=1e-4, atol=1e-3)


def test_tiled_walk_propagates_nan():
    geo = _geo((1, 6, 6, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1))
    x = np.ones((1, 6, 6, 4))
    x[0, 2, 3, 1] = np.nan
    y = H_.conv2d_forward_tiled(x, np.ones((3, 3, 4, 4)), None, geo)
    assert np.isnan(y[0, 1:4, 2:5]).all() and np.isfinite(y).sum() == y.size - 9 * 4


def test_tiled_input_gradient_nan_weight_stays_in_its_phase():
    geo = _geo((2, 9, 10, 4, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1))
    rng = np.random.default_rng(4)
    w = rng.standard_normal((3, 3, 4, 6))
    w[0, 0, 1, 3] = np.nan
    dy = rng.standard_normal((2, geo[7], geo[8], 6))
    got = H_.conv2d_backward_input_tiled(dy, w, geo)
    want = np.full(got.shape, np.nan, np.float32)
    _C.conv2d_backward_input(want, dy.astype(np.float32), w.astype(np.float32), *geo)
    phase = np.zeros(got.shape, bool)
    phase[:, 1::2, 1::2, 1] = True  # (h + pad - 0) % 2 == 0: tap (0, 0)'s phase
    assert np.isnan(got[np.isnan(want)]).all() and np.isnan(want).any()
    assert not np.isnan(got[~phase]).any()
    ok = ~np.isnan(got)
    np.testing.assert_allclose(want[ok], got[ok], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case,grp,row0,col0,k0", [
    ((2, 7, 9, 6, 8, 3, 3, 1, 1, 1, 1, 1, 1, 2), 1, 0, 0, 8),      # rows at the top/left padding
    ((2, 12, 9, 8, 130, 3, 3, 1, 1, 1, 1, 1, 1, 1), 0, 128, 128, 64),  # edge rows, cols, depth
    ((1, 33, 33, 3, 5, 3, 3, 2, 2, 2, 2, 2, 2, 1), 0, 256, 0, 24)])  # stride/dilation, last k-step
def test_tile_loaders_equal_numpy_matrices(case, grp, row0, col0, k0):
    geo = _geo(case)
    N, H, W, C, K, R, S, P, Q, sh, sw, dh, dw, pt, pl, groups = geo
    cg, kg = C // groups, K // groups
    rng = np.random.default_rng(1)
    x = rng.standard_normal((N, H, W, C))
    w = rng.standard_normal((R, S, cg, K))
    dy = rng.standard_normal((N, P, Q, K))

    def window(mat, r0, c0):  # mat[r0:r0+128, c0:c0+8] zero-extended, as the k-major tile
        out = np.zeros((128, 8))
        part = mat[r0:r0 + 128, c0:c0 + 8]
        out[:part.shape[0], :part.shape[1]] = part
        return out.T

    # forward: A = im2col rows, B = the group's filter matrix
    a, bt = H_.conv_tiles("forward", x, w, geo, row0, col0, grp, k0, R * S * cg)
    np.testing.assert_array_equal(a, window(im2col(x, geo, grp), row0, k0))
    wmat = w.reshape(R * S * cg, K)[:, grp * kg:(grp + 1) * kg]
    np.testing.assert_array_equal(bt, window(wmat.T, col0, k0))
    # input gradient (job z = grp: stride phase (0, 0)): A = dy through the inverse map
    am, bm = dgrad_phase_matrices(dy, w, geo, grp)
    if am.shape[1] > k0 and am.shape[0] > row0:
        a, bt = H_.conv_tiles("backward_input", dy, w, geo, row0, col0, grp, k0, am.shape[1])
        np.testing.assert_array_equal(a, window(am, row0, k0))
        np.testing.assert_array_equal(bt, window(bm.T, col0, k0))
    # weight gradient: A = im2col^T (chunk ending at kend), B = dy of the group
    kend = min(N * P * Q, k0 + 5)
    a, bt = H_.conv_tiles("backward_weight", x, dy, geo, 0, col0, grp, k0, kend)
    at = im2col(x, geo, grp)[:kend]
    np.testing.assert_array_equal(a, window(at.T, 0, k0))
    dmat = dy.reshape(-1, K)[:kend, grp * kg:(grp + 1) * kg]
    np.testing.assert_array_equal(bt, window(dmat.T, col0, k0))


@pytest.mark.parametrize("case", tiled_cases() + [(64, 56, 56, 64, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1),
                                                  (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1)])
def test_wgrad_split_covers_the_reduction(case):
    geo = _geo(case)
    L = geo[0] * geo[7] * geo[8]
    splits, chunk = H_.conv_wgrad_split(geo)
    assert chunk % 8 == 0 and splits >= 1 and splits * geo[15] <= 65535
    assert (splits - 1) * chunk < max(L, 1) <= splits * chunk
    if L >= 8 * 32 * 2 and geo[3] * geo[4] * geo[5] * geo[6] <= 64 * 64 * 9:
        assert splits > 1  # a long reduction is cut into chunks


@pytest.mark.parametrize("geo", [(1, 1, 1, 1, 1, 1, 1, 1, 1, 2**31, 1, 1, 1, 0, 0, 1),
                                 (1, 2**31, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1),
                                 (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 2)])
def test_tile_geometry_is_checked(geo):
    with pytest.raises(ValueError):
        H_.conv_wgrad_split(geo)


@pytest.mark.parametrize("case", [(2, 9, 11, 3, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1),
                                  (1, 7, 13, 4, 4, 3, 2, 3, 2, 1, 2, 2, 1, 2),
                                  (1, 2, 3, 2, 2, 3, 3, 4, 5, 1, 1, 1, 2, 1)])
def test_input_gradient_phase_tiles_equal_numpy(case):
    """Every (group, stride phase) job of the input gradient: its first k-steps' shared tiles
    equal the NumPy phase matrices (only the taps that reach the phase)."""
    geo = _geo(case)
    N, H, W, C, K, R, S, P, Q, sh, sw, dh, dw, pt, pl, groups = geo
    rng = np.random.default_rng(2)
    dy = rng.standard_normal((N, P, Q, K))
    w = rng.standard_normal((R, S, C // groups, K))
    jobs = H_.conv_dgrad_jobs(geo)
    assert len(jobs) == groups * min(sh, H) * min(sw, W)
    for z, (grp, fh, fw, M, Ncols, D) in enumerate(jobs):
        am, bm = dgrad_phase_matrices(dy, w, geo, z)
        assert (M, Ncols, D) == (am.shape[0], bm.shape[1], am.shape[1])
        for k0 in range(0, D, 8):
            a, bt = H_.conv_tiles("backward_input", dy, w, geo, 0, 0, z, k0, D)
            ref_a = np.zeros((128, 8))
            ref_a[:min(M, 128), :min(8, D - k0)] = am[:128, k0:k0 + 8]
            ref_b = np.zeros((8, 128))
            ref_b[:min(8, D - k0), :Ncols] = bm[k0:k0 + 8]
            np.testing.assert_array_equal(a, ref_a.T)
            np.testing.assert_array_equal(bt, ref_b)
    # the phases partition dx's rows; stride 1 would be one phase with every tap
    for grp in range(groups):
        assert sum(j[3] for j in jobs if j[0] == grp) == N * H * W


def test_input_gradient_stride1_is_one_phase():
    geo = _geo((2, 5, 6, 4, 6, 3, 2, 1, 1, 2, 1, 1, 0, 2))
    jobs = H_.conv_dgrad_jobs(geo)
    assert [(j[0], j[3], j[5]) for j in jobs] == [(0, 60, 3 * 2 * 3), (1, 60, 3 * 2 * 3)]
