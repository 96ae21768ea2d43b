"""image_resize (op "image_resize_separable"): the differentiable op behind Resizing and CenterCrop.

x (N, H, W, C) channels-last float -> (N, P, Q, C). The optional crop or pad to the target
aspect ratio (Keras's `crop_to_aspect_ratio` / `pad_to_aspect_ratio`, with torch's integer
arithmetic for the box) is folded into the two axis matrices: a crop keeps a window of input
columns, a pad adds rows of `fill_value`. So y = B_h x B_w^T + fill_value * E, with B = A @ S
(A the resampling matrix of `resize_weights`, S the crop selection / pad embedding) and E the
share of padding in each output pixel; the gradient is B_h^T g B_w.
"""

import numpy as np

from fkeras.layers.preprocessing.resize_weights import resize_matrix
from fkeras.ops import shape_utils as su
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import Op, apply
from fkeras.ops.resize import _two_axis_product


def aspect_box(height, width, target_height, target_width, mode):
    """(start_h, size_h, start_w, size_w): the crop window (mode "crop") or the padded size
    and the image's offset in it (mode "pad"), as Keras 3's torch backend computes them."""
    if mode == "crop":
        crop_h = max(min(height, int(float(width * target_height) / target_width)), 1)
        crop_w = max(min(width, int(float(height * target_width) / target_height)), 1)
        return (int(float(height - crop_h) / 2), crop_h, int(float(width - crop_w) / 2),
                crop_w)
    pad_h = max(height, int(float(width * target_height) / target_width))
    pad_w = max(width, int(float(height * target_width) / target_height))
    start_h, start_w = int(float(pad_h - height) / 2), int(float(pad_w - width) / 2)
    # Torch's backend pads start rows on both sides: the padded size is size + 2 * start.
    return start_h, height + 2 * start_h, start_w, width + 2 * start_w


def _axis_matrix(in_size, out_size, start, size, mode, interpolation, antialias):
    """(B, kept, read): B maps the original axis to the output; kept marks the output's share
    of real (not padded) input (None without padding); read marks the input pixels each
    output reads."""
    a, read = resize_matrix(size if mode else in_size, out_size, interpolation, antialias,
                            taps=True)
    if mode == "crop":
        b, r = np.zeros((out_size, in_size)), np.zeros((out_size, in_size), bool)
        b[:, start:start + size], r[:, start:start + size] = a, read
        return b, None, r
    if mode == "pad":
        return (a[:, start:start + in_size], a[:, start:start + in_size].sum(axis=1),
                read[:, start:start + in_size])
    return a, None, read


class ImageResize(Op):
    name = "image_resize_separable"

    def output_spec(self, x, size=(1, 1), **attrs):
        shape = su.shape_of(x)
        return (shape[0], size[0], size[1], shape[3])

    def forward(self, dev, x, size=(1, 1), interpolation="bilinear", antialias=False,
                mode=None, fill_value=0.0):
        _, h, w, _ = x.shape
        box = aspect_box(h, w, size[0], size[1], mode) if mode else (0, h, 0, w)
        bh, kh, rh = _axis_matrix(h, size[0], box[0], box[1], mode, interpolation, antialias)
        bw, kw, rw = _axis_matrix(w, size[1], box[2], box[3], mode, interpolation, antialias)
        bh, bw = bh.astype(x.dtype), bw.astype(x.dtype)
        y = _two_axis_product(x, bh, bw, (rh, rw))
        if mode == "pad" and fill_value != 0.0:
            # Resampling rows sum to 1, so the padding's share of output (p, q) is
            # 1 - kh[p] * kw[q], where k is the share of real input along each axis.
            fill = 1.0 - np.outer(kh, kw)
            y = y + np.asarray(fill_value * fill[None, :, :, None], dtype=x.dtype)
        return np.ascontiguousarray(y, dtype=x.dtype), (bh, bw)

    def backward(self, dev, saved, g, needs, **attrs):
        bh, bw = saved
        return (_two_axis_product(g, bh.T, bw.T),)


def image_resize(x, size, interpolation="bilinear", antialias=False, mode=None,
                 fill_value=0.0):
    """Resizes channels-last images x (N, H, W, C) to `size` = (P, Q) (see module docstring)."""
    return apply(_R["image_resize_separable"], x, size=(int(size[0]), int(size[1])),
                 interpolation=interpolation, antialias=bool(antialias), mode=mode,
                 fill_value=float(fill_value))
