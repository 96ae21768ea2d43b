"""Independent NumPy float64 formulations of the layers, written from the Keras definitions
(direct loops over output positions and time steps), for the layer tests."""

import math

import numpy as np


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


ACT = {"tanh": np.tanh, "sigmoid": _sigmoid, "relu": lambda z: np.maximum(z, 0.0),
       "linear": lambda z: z, "hard_sigmoid": lambda z: np.clip(z / 6.0 + 0.5, 0.0, 1.0)}


def out_size_and_pad(size, k, stride, dil, padding):
    eff = (k - 1) * dil + 1
    if padding == "same":
        out = math.ceil(size / stride)
        return out, max((out - 1) * stride + eff - size, 0) // 2
    return (size - eff) // stride + 1, 0


def conv2d_nhwc(x, w, b=None, strides=(1, 1), dilation=(1, 1), padding="valid", act="linear"):
    """x (N, H, W, C), w (R, S, C/groups, K); groups = C / w.shape[2]."""
    x, w = np.asarray(x, np.float64), np.asarray(w, np.float64)
    N, H, W, C = x.shape
    R, S, Cg, K = w.shape
    G = C // Cg
    Kg = K // G
    P, pt = out_size_and_pad(H, R, strides[0], dilation[0], padding)
    Q, pl = out_size_and_pad(W, S, strides[1], dilation[1], padding)
    xp = np.zeros((N, H + R * dilation[0] + P * strides[0],
                   W + S * dilation[1] + Q * strides[1], C))
    xp[:, pt:pt + H, pl:pl + W] = x
    y = np.zeros((N, P, Q, K))
    for p in range(P):
        for q in range(Q):
            h0, w0 = p * strides[0], q * strides[1]
            win = xp[:, h0:h0 + (R - 1) * dilation[0] + 1:dilation[0],
                     w0:w0 + (S - 1) * dilation[1] + 1:dilation[1]]
            for g in range(G):
                y[:, p, q, g * Kg:(g + 1) * Kg] = np.einsum(
                    "nrsc,rsck->nk", win[..., g * Cg:(g + 1) * Cg], w[..., g * Kg:(g + 1) * Kg])
    if b is not None:
        y = y + np.asarray(b, np.float64)
    return ACT[act](y)


def pool2d_nhwc(x, pool, strides, padding, mode):
    x = np.asarray(x, np.float64)
    N, H, W, C = x.shape
    P, pt = out_size_and_pad(H, pool[0], strides[0], 1, padding)
    Q, pl = out_size_and_pad(W, pool[1], strides[1], 1, padding)
    y = np.zeros((N, P, Q, C))
    for p in range(P):
        for q in range(Q):
            h0, w0 = p * strides[0] - pt, q * strides[1] - pl
            win = x[:, max(h0, 0):min(h0 + pool[0], H), max(w0, 0):min(w0 + pool[1], W)]
            y[:, p, q] = win.max(axis=(1, 2)) if mode == "max" else win.mean(axis=(1, 2))
    return y


def lstm(x, kernel, rkernel, bias, h=None, c=None, go_backwards=False, act="tanh",
         rec="sigmoid"):
    x = np.asarray(x, np.float64)
    N, T, _ = x.shape
    U = rkernel.shape[0]
    h = np.zeros((N, U)) if h is None else h
    c = np.zeros((N, U)) if c is None else c
    hs = []
    for t in (range(T - 1, -1, -1) if go_backwards else range(T)):
        z = x[:, t] @ kernel + h @ rkernel + (0 if bias is None else bias)
        i, f = ACT[rec](z[:, :U]), ACT[rec](z[:, U:2 * U])
        g, o = ACT[act](z[:, 2 * U:3 * U]), ACT[rec](z[:, 3 * U:])
        c = f * c + i * g
        h = o * ACT[act](c)
        hs.append(h)
    return np.stack(hs, axis=1), h, c


def _gru_biases(bias, U, reset_after):
    """The GRU's input and recurrent biases (3U,) each: bias (2, 3U) with reset_after, (3U,)
    without (no recurrent bias), or None (zeros)."""
    if bias is None:
        return np.zeros(3 * U), np.zeros(3 * U)
    if reset_after:
        return bias[0], bias[1]
    return bias, np.zeros(3 * U)


def gru(x, kernel, rkernel, bias, h=None, reset_after=True, go_backwards=False, act="tanh",
        rec="sigmoid"):
    x = np.asarray(x, np.float64)
    N, T, _ = x.shape
    U = rkernel.shape[0]
    h = np.zeros((N, U)) if h is None else h
    b_in, b_rec = _gru_biases(bias, U, reset_after)
    hs = []
    for t in (range(T - 1, -1, -1) if go_backwards else range(T)):
        xz = x[:, t] @ kernel + b_in
        if reset_after:
            hr = h @ rkernel + b_rec
            z = ACT[rec](xz[:, :U] + hr[:, :U])
            r = ACT[rec](xz[:, U:2 * U] + hr[:, U:2 * U])
            cand = ACT[act](xz[:, 2 * U:] + r * hr[:, 2 * U:])
        else:
            z = ACT[rec](xz[:, :U] + h @ rkernel[:, :U])
            r = ACT[rec](xz[:, U:2 * U] + h @ rkernel[:, U:2 * U])
            cand = ACT[act](xz[:, 2 * U:] + (r * h) @ rkernel[:, 2 * U:])
        h = z * h + (1 - z) * cand
        hs.append(h)
    return np.stack(hs, axis=1), h


def simple_rnn(x, kernel, rkernel, bias, h=None, go_backwards=False, act="tanh"):
    x = np.asarray(x, np.float64)
    N, T, _ = x.shape
    h = np.zeros((N, rkernel.shape[0])) if h is None else h
    hs = []
    for t in (range(T - 1, -1, -1) if go_backwards else range(T)):
        h = ACT[act](x[:, t] @ kernel + h @ rkernel + (0 if bias is None else bias))
        hs.append(h)
    return np.stack(hs, axis=1), h


def batch_norm(x, axes, gamma, beta, mean=None, var=None, epsilon=1e-3):
    """Normalizes over every axis not in `axes` (the kept axes); batch stats when mean is None.
    Returns (y, mean, var) with mean/var in the broadcast shape."""
    x = np.asarray(x, np.float64)
    reduce = tuple(a for a in range(x.ndim) if a not in axes)
    bshape = [x.shape[a] if a in axes else 1 for a in range(x.ndim)]
    if mean is None:
        mean = x.mean(axis=reduce, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=reduce, keepdims=True)
    else:
        mean, var = np.reshape(mean, bshape), np.reshape(var, bshape)
    g = 1.0 if gamma is None else np.reshape(gamma, bshape)
    b = 0.0 if beta is None else np.reshape(beta, bshape)
    return g * (x - mean) / np.sqrt(var + epsilon) + b, mean, var


# ---- recurrent cells one step at a time, with Keras's masking and per-gate dropout ----

def lstm_cell(x, states, kernel, rkernel, bias, act="tanh", rec="sigmoid", xm=None, hm=None):
    """One LSTM step; xm / hm: per-gate (4) input / recurrent dropout masks or None."""
    h, c = states
    U = rkernel.shape[0]
    z = []
    for g in range(4):
        cols = slice(g * U, (g + 1) * U)
        zg = (x if xm is None else x * xm[g]) @ kernel[:, cols]
        zg = zg + (h if hm is None else h * hm[g]) @ rkernel[:, cols]
        z.append(zg + (0 if bias is None else bias[cols]))
    c = ACT[rec](z[1]) * c + ACT[rec](z[0]) * ACT[act](z[2])
    h = ACT[rec](z[3]) * ACT[act](c)
    return h, [h, c]


def gru_cell(x, states, kernel, rkernel, bias, reset_after=True, act="tanh", rec="sigmoid",
             xm=None, hm=None):
    (h,) = states
    U = rkernel.shape[0]
    b_in, b_rec = _gru_biases(bias, U, reset_after)
    xs = [(x if xm is None else x * xm[g]) @ kernel[:, g * U:(g + 1) * U] + b_in[g * U:(g + 1) * U]
          for g in range(3)]
    hs = [h if hm is None else h * hm[g] for g in range(3)]
    rz = hs[0] @ rkernel[:, :U] + b_rec[:U]
    rr = hs[1] @ rkernel[:, U:2 * U] + b_rec[U:2 * U]
    z, r = ACT[rec](xs[0] + rz), ACT[rec](xs[1] + rr)
    if reset_after:
        cand = ACT[act](xs[2] + r * (hs[2] @ rkernel[:, 2 * U:] + b_rec[2 * U:]))
    else:
        cand = ACT[act](xs[2] + (r * hs[2]) @ rkernel[:, 2 * U:])
    h = z * h + (1 - z) * cand
    return h, [h]


def simple_rnn_cell(x, states, kernel, rkernel, bias, act="tanh", xm=None, hm=None):
    (h,) = states
    x = x if xm is None else x * xm[0]
    h = h if hm is None else h * hm[0]
    h = ACT[act](x @ kernel + h @ rkernel + (0 if bias is None else bias))
    return h, [h]


def run_rnn(cell, x, states, mask=None, go_backwards=False, zero_output_for_mask=False):
    """Keras 3's backend rnn loop: at a masked step the states carry over and the output
    repeats the previous output (zeros at first, or zeros with zero_output_for_mask).
    Returns (outputs (N, T, U) in processing order, last output, final states)."""
    x = np.asarray(x, np.float64)
    N, T, _ = x.shape
    states = [np.asarray(s, np.float64) for s in states]
    prev, outs = None, []
    for t in (range(T - 1, -1, -1) if go_backwards else range(T)):
        out, new = cell(x[:, t], states)
        if prev is None:
            prev = np.zeros_like(out)
        if mask is not None:
            m = np.asarray(mask, bool)[:, t:t + 1]
            new = [np.where(m, a, b) for a, b in zip(new, states)]
            out = np.where(m, out, 0.0 if zero_output_for_mask else prev)
        states, prev = new, out
        outs.append(out)
    return np.stack(outs, axis=1), prev, states
