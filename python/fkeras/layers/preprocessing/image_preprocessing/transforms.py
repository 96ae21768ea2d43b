"""NumPy image kernels shared by the augmentation layers (all on NHWC float arrays).

- `affine_transform`: Keras's `ops.image.affine_transform`. Each image has an 8-vector
  [a0, a1, a2, b0, b1, b2, c0, c1]; output pixel (y, x) reads the input at
  x_in = (a0 x + a1 y + a2) / k, y_in = (b0 x + b1 y + b2) / k, k = c0 x + c1 y + 1
  (Keras's affine op ignores c0, c1; the projective form is what RandomPerspective needs).
  Sampling: "nearest" rounds half to even, "bilinear" blends the 4 neighbours; each
  neighbour's index out of range is folded back by `fill_mode` ("reflect": d c b a | a b c d |
  d c b a, "wrap", "nearest": clamp, "constant": the neighbour counts as `fill_value`).
- `resize_bilinear`: half-pixel centres, no antialiasing (Keras's `image.resize` default).
- `rgb_to_hsv` / `hsv_to_rgb` / `rgb_to_grayscale`: Keras's colour conversions (values in
  [0, 1] for HSV, ITU-R 601 luma weights for grayscale).
"""

import numpy as np

FILL_MODES = ("reflect", "wrap", "constant", "nearest", "mirror")
INTERPOLATIONS = ("nearest", "bilinear")


def _fold(index, size, fill_mode):
    """Integer indices folded into [0, size) by `fill_mode` ("constant" clamps; the caller
    masks the out-of-range ones)."""
    if fill_mode == "wrap":
        return np.mod(index, size)
    if fill_mode == "mirror":
        if size == 1:
            return np.zeros_like(index)
        period = 2 * (size - 1)
        return np.abs(np.mod(index + size - 1, period) - (size - 1))
    if fill_mode == "reflect":
        period = 2 * size
        r = np.mod(index, period)
        return np.where(r < size, r, period - 1 - r)
    return np.clip(index, 0, size - 1)


def sample(images, x, y, interpolation="bilinear", fill_mode="constant", fill_value=0.0):
    """images: (N, H, W, C); x, y: (N, Ho, Wo) input coordinates -> (N, Ho, Wo, C) float32.

    Each neighbour is one gather of whole pixels (C contiguous values) from the flattened
    image; weights and sums are float32, coordinates float64."""
    n, h, w, c = images.shape
    flat = np.ascontiguousarray(images, dtype=np.float32).reshape(n * h * w, c)
    base = (np.arange(n) * (h * w))[:, None, None]
    if interpolation == "nearest":
        nodes_x = [(np.round(x).astype(np.int64), None)]
        nodes_y = [(np.round(y).astype(np.int64), None)]
    else:
        x0, y0 = np.floor(x), np.floor(y)
        wx, wy = (x - x0).astype(np.float32), (y - y0).astype(np.float32)
        x0, y0 = x0.astype(np.int64), y0.astype(np.int64)
        nodes_x = [(x0, 1.0 - wx), (x0 + 1, wx)]
        nodes_y = [(y0, 1.0 - wy), (y0 + 1, wy)]
    out = None
    for iy, wyv in nodes_y:
        row = base + _fold(iy, h, fill_mode) * w
        for ix, wxv in nodes_x:
            values = flat[row + _fold(ix, w, fill_mode)]
            if fill_mode == "constant":
                inside = (iy >= 0) & (iy < h) & (ix >= 0) & (ix < w)
                values = np.where(inside[..., None], values, np.float32(fill_value))
            if wyv is not None:
                values = values * (wyv * wxv)[..., None]
            out = values if out is None else out + values
    return out


def affine_transform(images, transform, interpolation="bilinear", fill_mode="constant",
                     fill_value=0.0):
    """images (N, H, W, C), transform (N, 8) or (8,) -> transformed images (N, H, W, C)."""
    if interpolation not in INTERPOLATIONS:
        raise ValueError("Invalid value for argument `interpolation`. Expected of one "
                         f"{set(INTERPOLATIONS)}. Received: interpolation={interpolation}")
    if fill_mode not in FILL_MODES:
        raise ValueError("Invalid value for argument `fill_mode`. Expected of one "
                         f"{set(FILL_MODES)}. Received: fill_mode={fill_mode}")
    images = np.asarray(images)
    t = np.asarray(transform, dtype=np.float64).reshape(-1, 8)
    if t.shape[0] == 1 and images.shape[0] > 1:
        t = np.repeat(t, images.shape[0], axis=0)
    n, h, w, _ = images.shape
    yy, xx = np.meshgrid(np.arange(h, dtype=np.float64), np.arange(w, dtype=np.float64),
                         indexing="ij")
    a0, a1, a2, b0, b1, b2, c0, c1 = (t[:, i, None, None] for i in range(8))
    k = c0 * xx + c1 * yy + 1.0
    x_in = (a0 * xx + a1 * yy + a2) / k
    y_in = (b0 * xx + b1 * yy + b2) / k
    out = sample(images, x_in, y_in, interpolation, fill_mode, fill_value)
    return out.astype(images.dtype if images.dtype.kind == "f" else np.float32)


def affine_matrix(angle, translate_x, translate_y, scale, shear_x, shear_y, height, width,
                  center_x=0.5, center_y=0.5):
    """(N, 8) transforms for rotation `angle`, shears (degrees), `scale` and translations
    (pixels) about the centre (center_x * (W - 1), center_y * (H - 1)): Keras's
    scale * shear * rotation composition."""
    rad = np.pi / 180.0
    angle, shx, shy = (np.asarray(v, np.float64) * rad for v in (angle, shear_x, shear_y))
    cos, sin = np.cos(angle), np.sin(angle)
    shx, shy = np.tan(shx), np.tan(shy)
    cx, cy = center_x * (width - 1), center_y * (height - 1)
    a0 = scale * (cos + shx * sin)
    a1 = scale * (-sin + shx * cos)
    a2 = translate_x + cx - cx * a0 - cy * a1
    b0 = scale * (shy * cos + sin)
    b1 = scale * (shy * -sin + cos)
    b2 = translate_y + cy - cx * b0 - cy * b1
    zeros = np.zeros_like(a0)
    return np.stack([a0, a1, a2, b0, b1, b2, zeros, zeros], axis=1)


def homography(start_points, end_points):
    """(N, 8) projective transforms mapping output points `end_points` (N, 4, 2) onto input
    points `start_points` (the 8x8 linear system of the four correspondences)."""
    s = np.asarray(start_points, np.float64)
    e = np.asarray(end_points, np.float64)
    n = s.shape[0]
    a = np.zeros((n, 8, 8))
    b = np.zeros((n, 8))
    for i in range(4):
        ex, ey, sx, sy = e[:, i, 0], e[:, i, 1], s[:, i, 0], s[:, i, 1]
        a[:, 2 * i, 0], a[:, 2 * i, 1], a[:, 2 * i, 2] = ex, ey, 1.0
        a[:, 2 * i, 6], a[:, 2 * i, 7] = -sx * ex, -sx * ey
        a[:, 2 * i + 1, 3], a[:, 2 * i + 1, 4], a[:, 2 * i + 1, 5] = ex, ey, 1.0
        a[:, 2 * i + 1, 6], a[:, 2 * i + 1, 7] = -sy * ex, -sy * ey
        b[:, 2 * i], b[:, 2 * i + 1] = sx, sy
    return np.linalg.solve(a, b[..., None])[..., 0]


def _linear_weights(size_in, size_out):
    """(size_out, size_in) half-pixel bilinear weights, no antialiasing."""
    scale = size_in / size_out
    src = np.maximum((np.arange(size_out) + 0.5) * scale - 0.5, 0.0)
    lo = np.minimum(np.floor(src).astype(np.int64), size_in - 1)
    hi = np.minimum(lo + 1, size_in - 1)
    frac = src - lo
    m = np.zeros((size_out, size_in))
    np.add.at(m, (np.arange(size_out), lo), 1.0 - frac)
    np.add.at(m, (np.arange(size_out), hi), frac)
    return m


def resize_bilinear(images, height, width):
    """images (N, H, W, C) -> (N, height, width, C), Keras's bilinear resize."""
    _, h, w, _ = images.shape
    rows, cols = _linear_weights(h, height), _linear_weights(w, width)
    out = np.einsum("ih,nhwc,jw->nijc", rows, images.astype(np.float64), cols)
    return out.astype(np.float32)


def rgb_to_grayscale(images):
    """(N, H, W, 3) -> (N, H, W, 1) with the ITU-R 601 luma weights."""
    weights = np.array([0.2989, 0.5870, 0.1140])
    return np.tensordot(images, weights, axes=([-1], [0]))[..., None]


def rgb_to_hsv(images):
    """RGB in [0, 1] -> HSV in [0, 1] (last axis)."""
    images = np.where(np.abs(images) < np.finfo(np.float32).eps, 0.0, images)
    r, g, b = images[..., 0], images[..., 1], images[..., 2]
    value = np.max(images, axis=-1)
    minimum = np.min(images, axis=-1)
    rng = value - minimum
    safe_v = np.where(value > 0, value, 1.0)
    saturation = np.where(value > 0, rng / safe_v, 0.0)
    safe_rng = np.where(rng > 0, rng, 1.0)
    norm = 1.0 / (6.0 * safe_rng)
    hue = np.where(value == g, norm * (b - r) + 2.0 / 6.0, norm * (r - g) + 4.0 / 6.0)
    hue = np.where(value == r, norm * (g - b), hue)
    hue = np.where(rng > 0, hue, 0.0)
    hue = np.where(hue < 0, hue + 1.0, hue)
    return np.stack([hue, saturation, value], axis=-1)


def hsv_to_rgb(images):
    """HSV in [0, 1] -> RGB in [0, 1] (last axis)."""
    h, s, v = images[..., 0], images[..., 1], images[..., 2]
    dh = h * 6.0
    dr = np.clip(np.abs(dh - 3.0) - 1.0, 0.0, 1.0)
    dg = np.clip(2.0 - np.abs(dh - 2.0), 0.0, 1.0)
    db = np.clip(2.0 - np.abs(dh - 4.0), 0.0, 1.0)
    one_minus_s = 1.0 - s
    return np.stack([(one_minus_s + s * c) * v for c in (dr, dg, db)], axis=-1)


def gaussian_kernel1d(size, sigma):
    x = np.arange(size, dtype=np.float64) - (size - 1) / 2.0
    k = np.exp(-0.5 * (x / sigma) ** 2)
    return k / k.sum()


def _correlate_axis(images, kernel, axis):
    """Zero-padded 'same' correlation of NHWC `images` with a 1-D kernel along `axis`."""
    half = len(kernel) // 2
    pad = [(0, 0)] * images.ndim
    pad[axis] = (half, len(kernel) - 1 - half)
    padded = np.pad(images, pad)
    out = np.zeros(images.shape, dtype=np.float64)
    n = images.shape[axis]
    for i, w in enumerate(kernel):
        out += w * np.take(padded, np.arange(i, i + n), axis=axis)
    return out


def gaussian_blur(images, kernel_size, sigma):
    """NHWC images blurred by a (kernel_size[0] x kernel_size[1]) Gaussian, zero padding
    (Keras's `image.gaussian_blur`; sigma = (sigma_x, sigma_y))."""
    out = _correlate_axis(images, gaussian_kernel1d(int(kernel_size[1]), float(sigma[1])), 1)
    return _correlate_axis(out, gaussian_kernel1d(int(kernel_size[0]), float(sigma[0])), 2)


def correlate3x3(images, kernel):
    """NHWC images correlated per channel with a 3x3 kernel, zero 'same' padding."""
    padded = np.pad(images.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
    h, w = images.shape[1:3]
    out = np.zeros(images.shape, dtype=np.float64)
    for i in range(3):
        for j in range(3):
            out += kernel[i][j] * padded[:, i:i + h, j:j + w]
    return out
