"""Independent NumPy float64 formulations of the N-D convolution and pooling layers, written
from the Keras definitions with direct loops over output (or input) positions, for the tests
of the convolution, pooling and reshaping layers."""

import itertools
import math

import numpy as np
from layer_refs import out_size_and_pad


def conv_nd(x, w, b=None, strides=None, dilation=None, padding="valid"):
    """x (N, *sp, C), w (*k, C/groups, K): the direct sum over each window, any rank."""
    x, w = np.asarray(x, np.float64), np.asarray(w, np.float64)
    n = x.ndim - 2
    strides, dilation = strides or (1,) * n, dilation or (1,) * n
    C, (Cg, K) = x.shape[-1], w.shape[-2:]
    G = C // Cg
    geo = [out_size_and_pad(x.shape[1 + i], w.shape[i], strides[i], dilation[i], padding)
           for i in range(n)]
    y = np.zeros((x.shape[0],) + tuple(o for o, _ in geo) + (K,))
    for out in itertools.product(*[range(o) for o, _ in geo]):
        for taps in itertools.product(*[range(k) for k in w.shape[:n]]):
            pos = [o * s + t * d - p for o, s, t, d, (_, p) in
                   zip(out, strides, taps, dilation, geo)]
            if any(q < 0 or q >= x.shape[1 + i] for i, q in enumerate(pos)):
                continue
            xv = x[(slice(None),) + tuple(pos)]  # (N, C)
            for g in range(G):
                kg = slice(g * (K // G), (g + 1) * (K // G))
                y[(slice(None),) + out + (kg,)] += xv[:, g * Cg:(g + 1) * Cg] @ \
                    w[taps + (slice(None), kg)]
    return y if b is None else y + b


def conv_transpose_nd(x, w, b=None, strides=None, dilation=None, padding="valid",
                      output_padding=None):
    """x (N, *sp, Cin), w (*k, F, Cin), Keras's definition as its JAX backend computes it:
    dilate the input by the strides, zero-pad it by (left, right) per axis (Keras's
    _convert_conv_transpose_padding_args_from_keras_to_jax rule), then correlate with the
    spatially flipped kernel at stride 1."""
    x, w = np.asarray(x, np.float64), np.asarray(w, np.float64)
    n = x.ndim - 2
    strides, dilation = strides or (1,) * n, dilation or (1,) * n
    pads = []
    for i in range(n):
        k, s, d = w.shape[i], strides[i], dilation[i]
        eff = (k - 1) * d + 1
        op = None if output_padding is None else output_padding[i]
        if padding == "valid":
            op = max(eff, s) - eff if op is None else op
            pads.append((eff - 1, eff - 1 + op))
        else:
            pad_len = s + eff - 2 if op is None else eff + eff % 2 - 2 + op
            left = min(pad_len // 2 + pad_len % 2, eff - 1)
            pads.append((left, pad_len - left))
    sp = [(L - 1) * s + 1 + a + c for L, s, (a, c) in zip(x.shape[1:-1], strides, pads)]
    xdp = np.zeros((x.shape[0],) + tuple(sp) + (x.shape[-1],))
    xdp[(slice(None),) + tuple(slice(a, a + (L - 1) * s + 1, s) for L, s, (a, _) in
                               zip(x.shape[1:-1], strides, pads))] = x
    eff = [(k - 1) * d + 1 for k, d in zip(w.shape[:n], dilation)]
    out = [m - e + 1 for m, e in zip(sp, eff)]
    y = np.zeros((x.shape[0],) + tuple(out) + (w.shape[-2],))
    for o in itertools.product(*[range(m) for m in out]):
        for taps in itertools.product(*[range(k) for k in w.shape[:n]]):
            src = tuple(oi + t * d for oi, t, d in zip(o, taps, dilation))
            flipped = tuple(k - 1 - t for k, t in zip(w.shape[:n], taps))
            y[(slice(None),) + o] += xdp[(slice(None),) + src] @ w[flipped].T
    return y if b is None else y + b


def pool_nd(x, pool, strides, padding, mode):
    """x (N, *sp, C): max or in-bounds mean over each window, any rank."""
    x = np.asarray(x, np.float64)
    n = x.ndim - 2
    geo = [out_size_and_pad(x.shape[1 + i], pool[i], strides[i], 1, padding) for i in range(n)]
    y = np.zeros((x.shape[0],) + tuple(o for o, _ in geo) + (x.shape[-1],))
    for out in itertools.product(*[range(o) for o, _ in geo]):
        sl = []
        for i, (o, (_, p)) in enumerate(zip(out, geo)):
            a = o * strides[i] - p
            sl.append(slice(max(a, 0), min(a + pool[i], x.shape[1 + i])))
        win = x[(slice(None),) + tuple(sl)]
        axes = tuple(range(1, n + 1))
        y[(slice(None),) + out] = win.max(axis=axes) if mode == "max" else win.mean(axis=axes)
    return y


def bilinear_upsample(x, fh, fw):
    """x (N, H, W, C): half-pixel-centre bilinear upsampling, one output pixel at a time."""
    x = np.asarray(x, np.float64)
    N, H, W, C = x.shape
    y = np.zeros((N, H * fh, W * fw, C))

    def src(i, f, size):
        s = min(max((i + 0.5) / f - 0.5, 0.0), size - 1)
        lo = int(math.floor(s))
        return lo, min(lo + 1, size - 1), s - lo

    for i in range(H * fh):
        h0, h1, a = src(i, fh, H)
        for j in range(W * fw):
            w0, w1, b = src(j, fw, W)
            y[:, i, j] = ((1 - a) * (1 - b) * x[:, h0, w0] + (1 - a) * b * x[:, h0, w1] +
                          a * (1 - b) * x[:, h1, w0] + a * b * x[:, h1, w1])
    return y
