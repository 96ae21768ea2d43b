"""Bounding-box formats (Keras's names) to and from absolute "xyxy", and clipping.

Boxes are float arrays (..., 4); "rel_" formats are fractions of the image height / width.
"""

import numpy as np

from fkeras.utils.bounding_boxes import clip_to_image_size

FORMATS = ("xyxy", "yxyx", "xywh", "center_xywh", "center_yxhw", "rel_xyxy", "rel_yxyx",
           "rel_xywh", "rel_center_xywh")


def _check(fmt):
    if fmt not in FORMATS:
        raise ValueError(f"`bounding_box_format` must be one of {FORMATS}. "
                         f"Received: bounding_box_format={fmt}")


def to_xyxy(boxes, fmt, height, width):
    """(..., 4) boxes in `fmt` -> absolute xyxy."""
    _check(fmt)
    b = np.asarray(boxes, dtype=np.float64)
    a, c, d, e = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    if fmt.startswith("rel_"):
        fmt = fmt[4:]
        scale = (width, height, width, height) if fmt != "yxyx" else (height, width, height,
                                                                       width)
        a, c, d, e = a * scale[0], c * scale[1], d * scale[2], e * scale[3]
    if fmt == "xyxy":
        out = (a, c, d, e)
    elif fmt == "yxyx":
        out = (c, a, e, d)
    elif fmt == "xywh":
        out = (a, c, a + d, c + e)
    elif fmt == "center_xywh":
        out = (a - d / 2, c - e / 2, a + d / 2, c + e / 2)
    else:  # center_yxhw
        out = (c - e / 2, a - d / 2, c + e / 2, a + d / 2)
    return np.stack(out, axis=-1)


def from_xyxy(boxes, fmt, height, width):
    """Absolute xyxy (..., 4) -> `fmt`."""
    _check(fmt)
    x1, y1, x2, y2 = (boxes[..., i] for i in range(4))
    rel = fmt.startswith("rel_")
    base = fmt[4:] if rel else fmt
    if rel:
        x1, x2, y1, y2 = x1 / width, x2 / width, y1 / height, y2 / height
    if base == "xyxy":
        out = (x1, y1, x2, y2)
    elif base == "yxyx":
        out = (y1, x1, y2, x2)
    elif base == "xywh":
        out = (x1, y1, x2 - x1, y2 - y1)
    elif base == "center_xywh":
        out = ((x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1)
    else:  # center_yxhw
        out = ((y1 + y2) / 2, (x1 + x2) / 2, y2 - y1, x2 - x1)
    return np.stack(out, axis=-1).astype(np.float32)


def clip_xyxy(bounding_boxes, height, width):
    """Clips absolute xyxy boxes to the image; labels of empty boxes become -1 (Keras)."""
    return clip_to_image_size(bounding_boxes, height, width, "xyxy")


def warp_xyxy(boxes, transform):
    """Absolute xyxy boxes (B, ..., 4) carried through the image warp `transform` (B, 8) of
    `transforms.affine_transform` (which maps each output pixel to the input point it
    samples): each box's corners go through the inverse map, and the box becomes their
    bounding box (Keras's convention for RandomRotation: box coordinates are taken as the
    warp's pixel coordinates, no half-pixel shift)."""
    t = np.asarray(transform, dtype=np.float64).reshape(-1, 8)
    m = np.concatenate([t, np.ones((t.shape[0], 1))], axis=1).reshape(-1, 3, 3)
    inverse = np.linalg.inv(m)  # input point -> output point
    b = np.asarray(boxes, dtype=np.float64)
    x1, y1, x2, y2 = (b[..., i] for i in range(4))
    xs = np.stack([x1, x2, x1, x2], axis=-1)
    ys = np.stack([y1, y1, y2, y2], axis=-1)
    inv = inverse.reshape((inverse.shape[0],) + (1,) * (b.ndim - 2) + (3, 3))
    w = inv[..., 2, 0, None] * xs + inv[..., 2, 1, None] * ys + inv[..., 2, 2, None]
    ox = (inv[..., 0, 0, None] * xs + inv[..., 0, 1, None] * ys + inv[..., 0, 2, None]) / w
    oy = (inv[..., 1, 0, None] * xs + inv[..., 1, 1, None] * ys + inv[..., 1, 2, None]) / w
    return np.stack([ox.min(-1), oy.min(-1), ox.max(-1), oy.max(-1)], axis=-1)
