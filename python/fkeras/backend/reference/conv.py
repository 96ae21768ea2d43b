"""Reference 2-D convolution and pooling kernels (float64 spec of cpp/conv/; kernels.h signatures).

Layouts: activations NHWC (N, H, W, C), outputs (N, P, Q, K), filters (R, S, C // groups, K).
Input row h = p * stride_h + r * dil_h - pad_top (columns likewise); rows and columns outside
the input read zero (convolution) or are skipped (pooling). Output channel k belongs to group
k // (K // groups), which reads input channels [g * C/groups, (g + 1) * C/groups).

The convolutions loop over the R x S taps and contract each shifted, strided view of the
zero-padded input with one filter tap (np.einsum over channels); pooling loops over the taps
with a validity mask. Every output is overwritten.
"""

import numpy as np

from fkeras.backend.reference import activation_math


def _f64(a, *shape):
    return np.asarray(a, dtype=np.float64).reshape(shape)


def _check_groups(name, C, K, groups):
    if groups < 1 or C % groups or K % groups:
        raise ValueError(
            f"{name}: groups must be >= 1 and divide C and K, received groups={groups}, "
            f"C={C}, K={K}"
        )


def _padded_extent(size, out, k, stride, dil, pad_before):
    """Length of the zero-padded input axis that covers every tap of every output position."""
    needed = (out - 1) * stride + (k - 1) * dil + 1 if out > 0 else 0
    return max(pad_before + size, needed)


def _tap_view(xp, r, s, P, Q, stride_h, stride_w, dil_h, dil_w):
    """The (N, P, Q, ...) view of padded xp read by filter tap (r, s)."""
    h0, w0 = r * dil_h, s * dil_w
    rows = slice(h0, h0 + (P - 1) * stride_h + 1, stride_h)
    cols = slice(w0, w0 + (Q - 1) * stride_w + 1, stride_w)
    return xp[:, rows, cols]


def _pad(x, H, W, R, S, P, Q, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left):
    Hp = _padded_extent(H, P, R, stride_h, dil_h, pad_top)
    Wp = _padded_extent(W, Q, S, stride_w, dil_w, pad_left)
    xp = np.zeros((x.shape[0], Hp, Wp) + x.shape[3:], dtype=np.float64)
    xp[:, pad_top : pad_top + H, pad_left : pad_left + W] = x
    return xp


def conv2d_forward(y, x, w, bias, N, H, W, C, K, R, S, P, Q, stride_h, stride_w, dil_h, dil_w,
                   pad_top, pad_left, groups, activation, alpha):
    _check_groups("conv2d_forward", C, K, groups)
    G, Cg, Kg = groups, C // groups, K // groups
    xp = _pad(_f64(x, N, H, W, G, Cg), H, W, R, S, P, Q, stride_h, stride_w, dil_h, dil_w,
              pad_top, pad_left)
    w64 = _f64(w, R, S, Cg, G, Kg)
    z = np.zeros((N, P, Q, G, Kg))
    if P > 0 and Q > 0:
        for r in range(R):
            for s in range(S):
                patch = _tap_view(xp, r, s, P, Q, stride_h, stride_w, dil_h, dil_w)
                z += np.einsum("npqgc,cgk->npqgk", patch, w64[r, s])
    z = z.reshape(N, P, Q, K)
    if bias is not None:
        z = z + _f64(bias, K)
    y.reshape(N, P, Q, K)[...] = activation_math.forward(z, activation, alpha)


def conv2d_backward_input(dx, dy, w, N, H, W, C, K, R, S, P, Q, stride_h, stride_w, dil_h, dil_w,
                          pad_top, pad_left, groups):
    _check_groups("conv2d_backward_input", C, K, groups)
    G, Cg, Kg = groups, C // groups, K // groups
    dy64 = _f64(dy, N, P, Q, G, Kg)
    w64 = _f64(w, R, S, Cg, G, Kg)
    dxp = _pad(np.zeros((N, H, W, G, Cg)), H, W, R, S, P, Q, stride_h, stride_w, dil_h, dil_w,
               pad_top, pad_left)
    if P > 0 and Q > 0:
        for r in range(R):
            for s in range(S):
                view = _tap_view(dxp, r, s, P, Q, stride_h, stride_w, dil_h, dil_w)
                view += np.einsum("npqgk,cgk->npqgc", dy64, w64[r, s])
    dx.reshape(N, H, W, C)[...] = dxp[:, pad_top : pad_top + H, pad_left : pad_left + W].reshape(
        N, H, W, C)


def conv2d_backward_weight(dw, dy, x, N, H, W, C, K, R, S, P, Q, stride_h, stride_w, dil_h, dil_w,
                           pad_top, pad_left, groups):
    _check_groups("conv2d_backward_weight", C, K, groups)
    G, Cg, Kg = groups, C // groups, K // groups
    xp = _pad(_f64(x, N, H, W, G, Cg), H, W, R, S, P, Q, stride_h, stride_w, dil_h, dil_w,
              pad_top, pad_left)
    dy64 = _f64(dy, N, P, Q, G, Kg)
    out = np.zeros((R, S, Cg, G, Kg))
    if P > 0 and Q > 0:
        for r in range(R):
            for s in range(S):
                patch = _tap_view(xp, r, s, P, Q, stride_h, stride_w, dil_h, dil_w)
                out[r, s] = np.einsum("npqgc,npqgk->cgk", patch, dy64)
    dw.reshape(R, S, Cg, K)[...] = out.reshape(R, S, Cg, K)


def _window_taps(H, W, P, Q, R, S, stride_h, stride_w, pad_top, pad_left, name):
    """Yields (h (P,), w (Q,), valid (P, Q)) for each tap in row-major (r, s) order.

    Raises ValueError when some window lies entirely in the padding.
    """
    hs = [np.arange(P) * stride_h + r - pad_top for r in range(R)]
    ws = [np.arange(Q) * stride_w + s - pad_left for s in range(S)]
    rows_ok = np.zeros(P, bool)
    cols_ok = np.zeros(Q, bool)
    for h in hs:
        rows_ok |= (h >= 0) & (h < H)
    for w in ws:
        cols_ok |= (w >= 0) & (w < W)
    if not (rows_ok.all() and cols_ok.all()):
        raise ValueError(f"{name}: some pooling window lies entirely in the padding")
    for h in hs:
        for w in ws:
            valid = ((h >= 0) & (h < H))[:, None] & ((w >= 0) & (w < W))[None, :]
            yield np.clip(h, 0, H - 1), np.clip(w, 0, W - 1), valid


def maxpool2d_forward(y, indices, x, N, H, W, C, P, Q, R, S, stride_h, stride_w, pad_top,
                      pad_left):
    x64 = _f64(x, N, H, W, C)
    best = np.full((N, P, Q, C), -np.inf)
    arg = np.full((N, P, Q, C), -1, dtype=np.int64)
    base = (np.arange(N)[:, None, None, None] * H) * W * C + np.arange(C)
    for h, w, valid in _window_taps(H, W, P, Q, R, S, stride_h, stride_w, pad_top, pad_left,
                                    "maxpool2d_forward"):
        v = x64[:, h][:, :, w]
        # The first maximum wins; NaN counts as the maximum (the first NaN wins), as np.argmax.
        better = (v > best) | (np.isnan(v) & ~np.isnan(best)) | (arg < 0)
        take = valid[None, :, :, None] & better
        best = np.where(take, v, best)
        flat = base + (h[:, None] * W + w[None, :])[None, :, :, None] * C
        arg = np.where(take, flat, arg)
    y.reshape(N, P, Q, C)[...] = best
    if indices is not None:  # None: the values only (inference)
        indices.reshape(N, P, Q, C)[...] = arg


def conv2d_forward_maxpool2d(y, x, w, bias, N, H, W, C, K, R, S, P, Q, stride_h, stride_w,
                             dil_h, dil_w, pad_top, pad_left, groups, activation, alpha, pool_h,
                             pool_w, indices=None):
    if pool_h < 1 or pool_w < 1:
        raise ValueError("conv2d_forward_maxpool2d: arguments 'pool_h', 'pool_w' must be >= 1, "
                         f"received ({pool_h}, {pool_w})")
    z = np.empty((N, P, Q, K))
    conv2d_forward(z, x, w, bias, N, H, W, C, K, R, S, P, Q, stride_h, stride_w, dil_h, dil_w,
                   pad_top, pad_left, groups, activation, alpha)
    Pp, Qp = P // pool_h, Q // pool_w
    maxpool2d_forward(y, indices, z, N, P, Q, K, Pp, Qp, pool_h, pool_w, pool_h, pool_w, 0, 0)


def conv2d_maxpool2d_backward(dz, dbias, dy, y, indices, N, P, Q, K, pool_h, pool_w, activation,
                              alpha):
    name = "conv2d_maxpool2d_backward"
    if pool_h < 1 or pool_w < 1:
        raise ValueError(f"{name}: arguments 'pool_h', 'pool_w' must be >= 1, received "
                         f"({pool_h}, {pool_w})")
    if activation not in (0, 1, 13):
        raise ValueError(f"{name}: argument 'activation' must be linear (0), relu (1) or "
                         f"leaky_relu, received code {activation}")
    Pp, Qp = P // pool_h, Q // pool_w
    g, v = _f64(dy, N, Pp, Qp, K), _f64(y, N, Pp, Qp, K)
    slope = 0.0 if activation == 1 else float(alpha)
    d = g if activation == 0 else g * np.where(v > 0, 1.0, slope)
    out = np.zeros(N * P * Q * K)
    np.add.at(out, np.asarray(indices).reshape(-1), d.reshape(-1))
    if dz is not None:
        dz.reshape(-1)[...] = out
    if dbias is not None:
        dbias[...] = out.reshape(-1, K).sum(axis=0) if K else 0.0


def maxpool2d_backward(dx, dy, indices, N, H, W, C, P, Q):
    out = np.zeros(N * H * W * C)
    np.add.at(out, np.asarray(indices).reshape(-1), _f64(dy, N * P * Q * C))
    dx.reshape(-1)[...] = out


def _avg_counts(H, W, P, Q, R, S, stride_h, stride_w, pad_top, pad_left, name):
    count = np.zeros((P, Q))
    for _, _, valid in _window_taps(H, W, P, Q, R, S, stride_h, stride_w, pad_top, pad_left, name):
        count += valid
    return count


def avgpool2d_forward(y, x, N, H, W, C, P, Q, R, S, stride_h, stride_w, pad_top, pad_left):
    x64 = _f64(x, N, H, W, C)
    total = np.zeros((N, P, Q, C))
    name = "avgpool2d_forward"
    for h, w, valid in _window_taps(H, W, P, Q, R, S, stride_h, stride_w, pad_top, pad_left, name):
        total += np.where(valid[None, :, :, None], x64[:, h][:, :, w], 0.0)
    count = _avg_counts(H, W, P, Q, R, S, stride_h, stride_w, pad_top, pad_left, name)
    y.reshape(N, P, Q, C)[...] = total / count[None, :, :, None]


def avgpool2d_backward(dx, dy, N, H, W, C, P, Q, R, S, stride_h, stride_w, pad_top, pad_left):
    name = "avgpool2d_backward"
    count = _avg_counts(H, W, P, Q, R, S, stride_h, stride_w, pad_top, pad_left, name)
    share = _f64(dy, N, P, Q, C) / count[None, :, :, None]
    out = np.zeros((N, H, W, C))
    for h, w, valid in _window_taps(H, W, P, Q, R, S, stride_h, stride_w, pad_top, pad_left, name):
        contrib = np.where(valid[None, :, :, None], share, 0.0)
        np.add.at(out, (slice(None), h[:, None], w[None, :]), contrib)
    dx.reshape(N, H, W, C)[...] = out


KERNELS = {
    "conv2d_forward": conv2d_forward,
    "conv2d_backward_input": conv2d_backward_input,
    "conv2d_backward_weight": conv2d_backward_weight,
    "maxpool2d_forward": maxpool2d_forward,
    "conv2d_forward_maxpool2d": conv2d_forward_maxpool2d,
    "conv2d_maxpool2d_backward": conv2d_maxpool2d_backward,
    "maxpool2d_backward": maxpool2d_backward,
    "avgpool2d_forward": avgpool2d_forward,
    "avgpool2d_backward": avgpool2d_backward,
}
