"""Per-axis resampling matrices: Keras 3's `image.resize` on the torch backend, which is
`torch.nn.functional.interpolate` (half-pixel centres, `align_corners=False`).

Each function returns an (out_size, in_size) float64 matrix M (and the boolean mask of the
pixels each output reads), so that resizing one axis is
y = M @ x along it; a 2-D resize is y = M_h x M_w^T per image and channel, and its gradient
applies the transposes. `scale = in_size / out_size`, rounded to float32 as torch computes it.

- "nearest" (torch's "nearest-exact"): y[i] = x[min(floor((i + 0.5) * scale), in - 1)].
- "bilinear": src = max((i + 0.5) * scale - 0.5, 0), blend of floor(src) and the next index
  (the last index repeated at the edge).
- "bicubic": src = (i + 0.5) * scale - 0.5 (not clamped), the 4 taps floor(src) - 1 .. + 2
  clamped to the axis, Keys' cubic convolution weights with a = -0.75.
- antialias (bilinear and bicubic, torch's `_upsample_*_aa`, PIL's scheme): a filter of
  support s = n/2 * max(scale, 1) (n = 2 bilinear, 4 bicubic) centred at c = (i + 0.5) * scale,
  taps j in [trunc(c - s + 0.5), trunc(c + s + 0.5)) within the axis, weights
  f((j - c + 0.5) / max(scale, 1)) normalized to sum 1; f is the triangle (bilinear) or the
  cubic convolution kernel with a = -0.5 (bicubic).
"""

import numpy as np


def _scale(in_size, out_size):
    return float(np.float32(in_size) / np.float32(out_size))


def nearest_matrix(in_size, out_size):
    scale = _scale(in_size, out_size)
    i = np.arange(out_size, dtype=np.float64)
    src = np.minimum(np.floor(((i + 0.5) * scale).astype(np.float32)).astype(np.int64),
                     in_size - 1)
    m = np.zeros((out_size, in_size))
    m[np.arange(out_size), src] = 1.0
    return m, m != 0


def linear_matrix(in_size, out_size):
    scale = np.float32(_scale(in_size, out_size))
    i = np.arange(out_size, dtype=np.float32)
    src = np.maximum(scale * (i + np.float32(0.5)) - np.float32(0.5), np.float32(0.0))
    lo = np.floor(src).astype(np.int64)
    frac = np.clip(src - lo, 0.0, 1.0).astype(np.float64)
    lo = np.minimum(lo, in_size - 1)
    hi = np.minimum(lo + 1, in_size - 1)
    m, read = np.zeros((out_size, in_size)), np.zeros((out_size, in_size), bool)
    rows = np.arange(out_size)
    np.add.at(m, (rows, lo), 1.0 - frac)
    np.add.at(m, (rows, hi), frac)
    read[rows, lo] = read[rows, hi] = True
    return m, read


def _cubic(x, a):
    """Keys' cubic convolution kernel at |x| (0 beyond 2)."""
    x = np.abs(x)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1, near, np.where(x < 2, far, 0.0))


def cubic_matrix(in_size, out_size):
    scale = np.float32(_scale(in_size, out_size))
    i = np.arange(out_size, dtype=np.float32)
    src = scale * (i + np.float32(0.5)) - np.float32(0.5)
    lo = np.floor(src).astype(np.int64)
    t = (src - lo).astype(np.float64)
    m, read = np.zeros((out_size, in_size)), np.zeros((out_size, in_size), bool)
    rows = np.arange(out_size)
    for k in range(4):
        w = _cubic(t - (k - 1), -0.75)
        cols = np.clip(lo - 1 + k, 0, in_size - 1)
        np.add.at(m, (rows, cols), w)
        read[rows, cols] = True
    return m, read


def antialias_matrix(in_size, out_size, interpolation):
    taps, kernel = {"bilinear": (2, lambda x: np.maximum(1.0 - np.abs(x), 0.0)),
                    "bicubic": (4, lambda x: _cubic(x, -0.5))}[interpolation]
    scale = _scale(in_size, out_size)
    support = taps / 2 * scale if scale >= 1.0 else taps / 2
    invscale = 1.0 / scale if scale >= 1.0 else 1.0
    m, read = np.zeros((out_size, in_size)), np.zeros((out_size, in_size), bool)
    for i in range(out_size):
        center = scale * (i + 0.5)
        start = max(int(center - support + 0.5), 0)
        stop = min(int(center + support + 0.5), in_size)
        j = np.arange(start, stop)
        w = kernel((j - center + 0.5) * invscale)
        total = w.sum()
        m[i, start:stop] = w / total if total != 0.0 else w
        read[i, start:stop] = True
    return m, read


def resize_matrix(in_size, out_size, interpolation, antialias=False, taps=False):
    """The (out_size, in_size) matrix resizing one axis (see the module docstring); taps=True
    also returns the mask of the input pixels each output reads, zero weights included (torch
    multiplies those as well: a NaN there makes the output NaN)."""
    if antialias and interpolation in ("bilinear", "bicubic"):
        m, read = antialias_matrix(in_size, out_size, interpolation)
    else:
        m, read = {"nearest": nearest_matrix, "bilinear": linear_matrix,
                   "bicubic": cubic_matrix}[interpolation](in_size, out_size)
    return (m, read) if taps else m
