"""The sampling op behind `fkeras.ops.image`'s geometric functions (map_coordinates,
affine_transform, perspective_transform, elastic_transform), as Keras 3.15's torch backend
samples: per axis, "nearest" (order 0) takes round-half-to-even of the coordinate, "bilinear"
(order 1) blends floor(c) and floor(c) + 1 with weights 1 - frac, frac; each neighbour's
index is folded into the axis by `fill_mode` ("constant"/"nearest": clamp, "wrap": modulo,
"mirror": d c b | a b c d | c b a, "reflect": d c b a | a b c d | d c b a) and, for
"constant", a neighbour out of range contributes `fill_value` instead of a pixel.

So every output element is sum_k w[k] * x.flat[idx[k]] + bias: a sparse linear map of the
input, built from the shapes and the (non-differentiable) coordinate inputs inside `forward`.
The gradient in the input is its adjoint, a scatter-add of g * w[k] onto idx[k]
(`np.bincount`). map_coordinates at order 1 with float coordinates also differentiates the
interpolation weights, as Keras's torch backend does (floor has no gradient): along axis a,
d y / d c_a = sum_k s[k, a] * prod_{b != a} w[k, b] * v[k], with s = -1 for the lower node and
+1 for the upper one and v[k] the corner's value (fill_value outside the input for
"constant"). Order 0, integer coordinates and integer images give the coordinates no
gradient (torch's round has none). The transforms and points of affine / perspective /
elastic receive no gradient.
"""

import itertools

import numpy as np

from fkeras.ops import shape_utils as su
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import Op, apply

FILL_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")
INTERPOLATIONS = {"nearest": 0, "bilinear": 1}


def _fix(index, size, fill_mode):
    if fill_mode == "wrap":
        return np.mod(index, size)
    if fill_mode in ("mirror", "reflect"):
        def mirror(i, n):
            s = n - 1
            return np.abs(np.mod(i + s, 2 * s) - s) if s else np.zeros_like(i)
        if fill_mode == "mirror":
            return mirror(index, size)
        return (mirror(2 * index + 1, 2 * size + 1) - 1) // 2
    return np.clip(index, 0, size - 1)


def _nodes(coord, order):
    """[(index, weight or None)] of one axis (an integer coordinate is exact)."""
    if coord.dtype.kind in "iu":
        return [(coord.astype(np.int64), None)]
    if order == 0:
        return [(np.round(coord).astype(np.int64), None)]
    lower = np.floor(coord)
    upper_w = coord - lower  # in the coordinates' dtype (float32 or float64), as Keras's
    lower = lower.astype(np.int64)
    return [(lower, upper_w.dtype.type(1.0) - upper_w), (lower + 1, upper_w)]


def sparse_map(shape, coords, order, fill_mode, fill_value, slopes=False):
    """(idx (K, M) int64, w (K, M), bias (M,), out_shape) sampling an array
    of `shape` at `coords` (one array per axis, broadcast together). slopes=True also returns
    (dw (K, D, M) float32, valid (K, M) bool or None): the derivative of each corner's weight
    in each axis's coordinate, and whether the corner is inside the input ("constant")."""
    coords = np.broadcast_arrays(*coords)
    out_shape = coords[0].shape
    axes = []
    for c, size in zip(coords, shape):
        fixed = []
        for index, weight in _nodes(c, order):
            valid = (index >= 0) & (index < size) if fill_mode == "constant" else None
            fixed.append((_fix(index, size, fill_mode), valid, weight))
        axes.append(fixed)
    strides = np.cumprod((1,) + tuple(shape[::-1]))[:-1][::-1]
    idx, ws, dws, valids = [], [], [], []
    # Weights and bias in float64 for float64 coordinates, else float32.
    wtype = np.float64 if any(c.dtype == np.float64 for c in coords) else np.float32
    bias = np.zeros(out_shape, wtype)
    for corner in itertools.product(*(range(len(a)) for a in axes)):
        items = [a[n] for a, n in zip(axes, corner)]
        flat = sum(i * int(s) for (i, _, _), s in zip(items, strides))
        w = np.ones(out_shape, wtype)
        valid = np.ones(out_shape, bool)
        for _, v, wt in items:
            if wt is not None:
                w = w * wt
            if v is not None:
                valid &= v
        if slopes:
            dws.append(np.stack([_slope(items, a, n, out_shape) for a, n in enumerate(corner)])
                       .reshape(len(items), -1))
            valids.append(valid.ravel())
        if fill_mode == "constant":
            bias += np.where(valid, 0.0, w * wtype(fill_value)).astype(wtype)
            w = np.where(valid, w, wtype(0.0))
        idx.append(np.broadcast_to(flat, out_shape).ravel())
        ws.append(w.ravel())
    if slopes:
        valid = np.stack(valids) if fill_mode == "constant" else None
        return np.stack(idx), np.stack(ws), bias.ravel(), out_shape, (np.stack(dws), valid)
    return np.stack(idx), np.stack(ws), bias.ravel(), out_shape


def _slope(items, axis, node, out_shape):
    """d (prod of the corner's weights) / d (coordinate of `axis`): the other axes' weights
    times -1 (lower node) or +1 (upper node)."""
    d = np.full(out_shape, np.float32(-1.0 if node == 0 else 1.0))
    for b, (_, _, wt) in enumerate(items):
        if b != axis:
            d = d * wt
    return d


def _image_grid(n, h, w, c):
    b = np.arange(n)[:, None, None, None]
    y = np.arange(h, dtype=np.float32)[None, :, None, None]
    x = np.arange(w, dtype=np.float32)[None, None, :, None]
    ch = np.arange(c)[None, None, None, :]
    return b, y, x, ch


def affine_coords(shape, transform):
    """Keras torch's affine coordinates: y_in = b0 x + b1 y + c0 ch + b2 and
    x_in = a0 x + a1 y + c1 ch + a2 (ch the channel index), NHWC."""
    n, h, w, c = shape
    t = np.asarray(transform, np.float32).reshape(-1, 8)
    if t.shape[0] == 1 and n > 1:
        t = np.repeat(t, n, axis=0)
    b, y, x, ch = _image_grid(n, h, w, c)
    a0, a1, a2, b0, b1, b2, c0, c1 = (t[:, i, None, None, None] for i in range(8))
    chf = ch.astype(np.float32)
    return [b, y * b1 + x * b0 + chf * c0 + b2, y * a1 + x * a0 + chf * c1 + a2, ch]


def homography(start_points, end_points):
    """(N, 8) projective transforms mapping output points `end_points` onto input points
    `start_points` (each (N, 4, 2), x then y), solved in float64."""
    s = np.asarray(start_points, np.float64).reshape(-1, 4, 2)
    e = np.asarray(end_points, np.float64).reshape(-1, 4, 2)
    n = s.shape[0]
    a = np.zeros((n, 8, 8))
    rhs = np.zeros((n, 8))
    for i in range(4):
        ex, ey, sx, sy = e[:, i, 0], e[:, i, 1], s[:, i, 0], s[:, i, 1]
        a[:, 2 * i, 0], a[:, 2 * i, 1], a[:, 2 * i, 2] = ex, ey, 1.0
        a[:, 2 * i, 6], a[:, 2 * i, 7] = -sx * ex, -sx * ey
        a[:, 2 * i + 1, 3], a[:, 2 * i + 1, 4], a[:, 2 * i + 1, 5] = ex, ey, 1.0
        a[:, 2 * i + 1, 6], a[:, 2 * i + 1, 7] = -sy * ex, -sy * ey
        rhs[:, 2 * i], rhs[:, 2 * i + 1] = sx, sy
    return np.linalg.solve(a, rhs[..., None])[..., 0].astype(np.float32)


def perspective_coords(shape, start_points, end_points):
    n, h, w, c = shape
    t = homography(start_points, end_points)
    if t.shape[0] == 1 and n > 1:
        t = np.repeat(t, n, axis=0)
    b, y, x, ch = _image_grid(n, h, w, 1)
    a0, a1, a2, a3, a4, a5, a6, a7 = (t[:, i, None, None, None] for i in range(8))
    denom = a6 * x + a7 * y + np.float32(1.0)
    x_in = (a0 * x + a1 * y + a2) / denom
    y_in = (a3 * x + a4 * y + a5) / denom
    return [b, y_in, x_in, np.arange(c)[None, None, None, :]]


def gaussian_kernel1d(size, sigma):
    x = np.arange(size, dtype=np.float32) - np.float32((size - 1) / 2)
    k = np.exp(np.float32(-0.5) * (x / np.float32(sigma)) ** 2)
    return (k / k.sum()).astype(np.float32)


def _blur_same(d, size, sigma):
    """(N, H, W) blurred by a size x size Gaussian with zero padding size // 2 (torch's)."""
    k = gaussian_kernel1d(size, sigma)
    p = size // 2
    out = np.zeros_like(d)
    dp = np.pad(d, ((0, 0), (p, p), (p, p)))
    h, w = d.shape[1:]
    for i in range(size):
        for j in range(size):
            out += k[i] * k[j] * dp[:, i:i + h, j:j + w]
    return out


def elastic_coords(shape, alpha, sigma, seed):
    """Keras's elastic displacement: N(0, 1) * sigma fields, Gaussian-blurred (kernel
    int(6 sigma) | 1, zero padding), scaled by alpha and added to the pixel grid. The random
    numbers come from NumPy's generator (seeded by `seed`), not torch's."""
    n, h, w, c = shape
    rng = np.random.default_rng(seed)
    size = int(6 * sigma) | 1
    dx = _blur_same(rng.standard_normal((n, h, w), np.float32) * np.float32(sigma), size, sigma)
    dy = _blur_same(rng.standard_normal((n, h, w), np.float32) * np.float32(sigma), size, sigma)
    b, y, x, ch = _image_grid(n, h, w, 1)
    dx, dy = dx[..., None], dy[..., None]
    return [b, y + np.float32(alpha) * dy, x + np.float32(alpha) * dx,
            np.arange(c)[None, None, None, :]]


def _coords(kind, shape, params, attrs):
    if kind == "map_coordinates":
        coords = np.asarray(params[0])
        if coords.dtype.kind == "f" and coords.dtype != np.float64:
            coords = coords.astype(np.float32)
        return list(coords)
    if kind == "affine":
        return affine_coords(shape, params[0])
    if kind == "perspective":
        return perspective_coords(shape, params[0], params[1])
    return elastic_coords(shape, attrs["alpha"], attrs["sigma"], attrs["seed"])


class ImageSample(Op):
    """x sampled at coordinates (see the module docstring); positional inputs after x are
    the coordinate parameters of `kind` (no gradient)."""

    name = "image_sample"

    def output_spec(self, x, *params, kind="affine", **attrs):
        if kind == "map_coordinates":
            return su.shape_of(params[0])[1:]
        return su.shape_of(x)

    def forward(self, dev, x, *params, kind="affine", order=1, fill_mode="constant",
                fill_value=0.0, alpha=None, sigma=None, seed=None):
        coords = _coords(kind, x.shape, params, {"alpha": alpha, "sigma": sigma, "seed": seed})
        # map_coordinates' float coordinates at order 1 have a gradient (module docstring).
        slopes = (kind == "map_coordinates" and order == 1 and x.dtype.kind == "f"
                  and np.asarray(params[0]).dtype.kind == "f")
        idx, w, bias, out_shape, *extra = sparse_map(x.shape, coords, order, fill_mode,
                                                     fill_value, slopes)
        dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float32)
        w, bias = w.astype(dtype, copy=False), bias.astype(dtype, copy=False)
        flat = np.ascontiguousarray(x).reshape(-1)
        corners = flat[idx]
        y = (w * corners).sum(axis=0, dtype=dtype) + bias
        coord_slope = None
        if slopes:  # d y / d c_a = sum_k dw[k, a] * v[k] (v: fill_value outside the input)
            dw, valid = extra[0]
            values = corners if valid is None else np.where(valid, corners, dtype.type(fill_value))
            coord_slope = np.einsum("kdm,km->dm", dw.astype(dtype, copy=False), values)
            coord_slope = coord_slope.astype(np.asarray(params[0]).dtype, copy=False)
        saved = (idx, w, x.shape, len(params), coord_slope)
        if x.dtype.kind != "f":  # integer images: rounded back, as Keras's torch backend
            return np.round(y).reshape(out_shape).astype(x.dtype), saved
        return y.reshape(out_shape), saved

    def backward(self, dev, saved, g, needs, **attrs):
        idx, w, shape, n_params, coord_slope = saved
        gflat = np.asarray(g).reshape(1, -1)
        gx = None
        if needs[0]:
            gx = np.bincount(idx.ravel(), weights=(w * gflat).ravel(),
                             minlength=int(np.prod(shape))).reshape(shape).astype(g.dtype)
        gc = None
        if coord_slope is not None and needs[1]:
            gc = (coord_slope * gflat).reshape((coord_slope.shape[0],) + np.shape(g))
        return (gx, gc) + (None,) * (n_params - 1)


def sample(x, *params, kind, order=1, fill_mode="constant", fill_value=0.0, alpha=None,
           sigma=None, seed=None):
    """Runs the sampling op (see the module docstring)."""
    return apply(_R["image_sample"], x, *params, kind=kind, order=int(order),
                 fill_mode=fill_mode, fill_value=float(fill_value), alpha=alpha,
                 sigma=sigma, seed=seed)
