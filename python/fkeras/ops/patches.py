"""Sliding-window patches (keras.ops names and signatures): unfold (im2col: (N, C, H, W) ->
(N, C*kh*kw, L)) and fold (col2im, its adjoint: overlapping values are summed), as one pair of
gathers and scatter-adds; and correlate (1-D cross-correlation, built from patches and a
matrix product, so it is differentiable in both inputs)."""

import numpy as np

from fkeras.ops import shape_utils as su
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import Op, apply


def _pair(v):
    return (int(v), int(v)) if np.ndim(v) == 0 else tuple(int(a) for a in v)


def _out_size(size, k, d, p, s):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _indices(h, w, k, d, p, s):
    """Row and column indices into the padded image for every (ki, kj, oi, oj)."""
    oh, ow = _out_size(h, k[0], d[0], p[0], s[0]), _out_size(w, k[1], d[1], p[1], s[1])
    if oh <= 0 or ow <= 0:
        raise ValueError(f"`unfold`: kernel {k} with dilation {d} does not fit an input of "
                         f"size {(h, w)} with padding {p}.")
    rows = (np.arange(k[0])[:, None, None, None] * d[0]
            + np.arange(oh)[None, None, :, None] * s[0])
    cols = (np.arange(k[1])[None, :, None, None] * d[1]
            + np.arange(ow)[None, None, None, :] * s[1])
    return rows, cols, oh, ow


def _unfold(x, k, d, p, s):
    n, c, h, w = x.shape
    rows, cols, oh, ow = _indices(h, w, k, d, p, s)
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    return np.ascontiguousarray(xp[:, :, rows, cols].reshape(n, c * k[0] * k[1], oh * ow))


def _fold(cols_, size, k, d, p, s):
    n = cols_.shape[0]
    h, w = size
    rows, cols, oh, ow = _indices(h, w, k, d, p, s)
    c = cols_.shape[1] // (k[0] * k[1])
    out = np.zeros((n, c, h + 2 * p[0], w + 2 * p[1]), cols_.dtype)
    vals = cols_.reshape(n, c, k[0], k[1], oh, ow)
    rr, cc = np.broadcast_arrays(rows, cols)
    np.add.at(out, (slice(None), slice(None), rr, cc), vals)
    return np.ascontiguousarray(out[:, :, p[0]:p[0] + h, p[1]:p[1] + w])


class Unfold(Op):
    name = "unfold"

    def output_spec(self, x, kernel=(1, 1), dilation=(1, 1), padding=(0, 0), stride=(1, 1)):
        n, c, h, w = su.shape_of(x)
        blocks = None if None in (h, w) else (
            _out_size(h, kernel[0], dilation[0], padding[0], stride[0])
            * _out_size(w, kernel[1], dilation[1], padding[1], stride[1]))
        return (n, None if c is None else c * kernel[0] * kernel[1], blocks)

    def forward(self, dev, x, kernel=(1, 1), dilation=(1, 1), padding=(0, 0), stride=(1, 1)):
        return _unfold(x, kernel, dilation, padding, stride), x.shape[2:]

    def backward(self, dev, size, g, needs, kernel=(1, 1), dilation=(1, 1), padding=(0, 0),
                 stride=(1, 1)):
        return (_fold(g, size, kernel, dilation, padding, stride),)


class Fold(Op):
    name = "fold"

    def output_spec(self, x, size=(1, 1), kernel=(1, 1), dilation=(1, 1), padding=(0, 0),
                    stride=(1, 1)):
        n, ck, _ = su.shape_of(x)
        return (n, None if ck is None else ck // (kernel[0] * kernel[1])) + tuple(size)

    def forward(self, dev, x, size=(1, 1), kernel=(1, 1), dilation=(1, 1), padding=(0, 0),
                stride=(1, 1)):
        return _fold(x, size, kernel, dilation, padding, stride), None

    def backward(self, dev, saved, g, needs, size=(1, 1), kernel=(1, 1), dilation=(1, 1),
                 padding=(0, 0), stride=(1, 1)):
        return (_unfold(g, kernel, dilation, padding, stride),)


def unfold(x, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding (kh, kw) blocks of x (N, C, H, W) as columns: (N, C*kh*kw, L) (keras.ops.unfold,
    torch's im2col layout)."""
    return apply(_R["unfold"], x, kernel=_pair(kernel_size), dilation=_pair(dilation),
                 padding=_pair(padding), stride=_pair(stride))


def fold(x, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Columns (N, C*kh*kw, L) summed back into an (N, C, H, W) image (keras.ops.fold)."""
    return apply(_R["fold"], x, size=_pair(output_size), kernel=_pair(kernel_size),
                 dilation=_pair(dilation), padding=_pair(padding), stride=_pair(stride))


def correlate(x1, x2, mode="valid"):
    """1-D cross-correlation of x1 with x2 (NumPy's `correlate` modes "valid", "same",
    "full") (keras.ops.correlate)."""
    from fkeras.ops import math as _m
    from fkeras.ops.arrangement import extract_sequences
    from fkeras.ops.elementwise import _float_input
    from fkeras.ops.padding import pad

    if mode not in ("valid", "same", "full"):
        raise ValueError(f"`mode` must be 'valid', 'same' or 'full'; received {mode!r}.")
    a, v = _float_input(x1), _float_input(x2)
    n, m = su.shape_of(a)[0], su.shape_of(v)[0]
    if m > n:
        raise ValueError("fkeras's `correlate` needs len(x1) >= len(x2); received "
                         f"{n} and {m}.")
    if mode == "full":
        a = pad(a, [(m - 1, m - 1)])
    elif mode == "same":
        a = pad(a, [(m // 2, (m - 1) // 2)])
    return _m.matmul(extract_sequences(a, m, 1), v)
