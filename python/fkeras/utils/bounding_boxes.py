"""keras.utils.bounding_boxes: conversions, IoU and geometric transforms of boxes, in NumPy.

Boxes are arrays whose last axis holds 4 coordinates in one of the formats below; `(N, 4)` and
batched `(batch, N, 4)` arrays are accepted. The functions return NumPy arrays (float32 unless a
`dtype` is given); they run outside the tape (no gradient), as data-pipeline utilities.

Formats (Keras's names): "xyxy", "yxyx", "xywh", "center_xywh", "center_yxhw", and the
relative forms "rel_xyxy", "rel_yxyx", "rel_xywh", "rel_center_xywh" (coordinates divided by the
image width and height, which conversions to or from them need).
"""

import math

import numpy as np

SUPPORTED_FORMATS = ("xyxy", "yxyx", "xywh", "center_xywh", "center_yxhw", "rel_xyxy",
                     "rel_yxyx", "rel_xywh", "rel_center_xywh")
_EPSILON = 1e-7  # keras.config.epsilon()


def _columns(boxes):
    return [boxes[..., i:i + 1] for i in range(4)]


def _join(*columns):
    return np.concatenate(columns, axis=-1)


def _to_xyxy(boxes, fmt, height, width):
    a, b, c, d = _columns(boxes)
    if fmt == "xyxy":
        return boxes
    if fmt == "yxyx":
        return _join(b, a, d, c)
    if fmt == "xywh":
        return _join(a, b, a + c, b + d)
    if fmt == "center_xywh":
        return _join(a - c / 2.0, b - d / 2.0, a + c / 2.0, b + d / 2.0)
    if fmt == "center_yxhw":
        return _join(b - d / 2.0, a - c / 2.0, b + d / 2.0, a + c / 2.0)
    # relative formats: the absolute form scaled by the image size
    return _to_xyxy(boxes, fmt[4:], height, width) * _join(width, height, width, height)


def _from_xyxy(boxes, fmt, height, width):
    if fmt.startswith("rel_"):
        return _from_xyxy(boxes / _join(width, height, width, height), fmt[4:], None, None)
    x1, y1, x2, y2 = _columns(boxes)
    if fmt == "xyxy":
        return boxes
    if fmt == "yxyx":
        return _join(y1, x1, y2, x2)
    if fmt == "xywh":
        return _join(x1, y1, x2 - x1, y2 - y1)
    w, h = x2 - x1, y2 - y1
    if fmt == "center_xywh":
        return _join(x1 + w / 2.0, y1 + h / 2.0, w, h)
    return _join(y1 + h / 2.0, x1 + w / 2.0, h, w)  # center_yxhw


def convert_format(boxes, source, target, height=None, width=None, dtype="float32"):
    """Converts boxes from the `source` format to the `target` format.

    Args:
        boxes: an array of shape (..., 4), or a dict whose "boxes" entry is one (the dict is
            updated and returned, as Keras does).
        source, target: format names (case-insensitive), see the module docstring.
        height, width: the image size; needed when either format is relative.
        dtype: the result's dtype.

    Example:
    ```python
    convert_format(np.array([[10, 20, 30, 60]]), "xyxy", "center_xywh")
    # [[20., 40., 20., 40.]]
    ```
    """
    if isinstance(boxes, dict):
        boxes["boxes"] = convert_format(boxes["boxes"], source, target, height, width, dtype)
        return boxes
    boxes = np.asarray(boxes)
    if boxes.shape[-1:] != (4,):
        raise ValueError("`boxes` must be a tensor with the last dimension of 4. "
                         f"Received: boxes.shape={boxes.shape}")
    source, target = source.lower(), target.lower()
    if source not in SUPPORTED_FORMATS or target not in SUPPORTED_FORMATS:
        raise ValueError(f"Invalid source or target format. Supported formats: "
                         f"{list(SUPPORTED_FORMATS)}. Received: source={source!r}, "
                         f"target={target!r}")
    if (source.startswith("rel_") or target.startswith("rel_")) and (
            height is None or width is None):
        raise ValueError("convert_format() must receive `height` and `width` transforming "
                         f"between relative and absolute formats. Received source={source!r}, "
                         f"target={target!r}, height={height}, width={width}.")
    boxes = boxes.astype(dtype)
    if source == target:
        return boxes
    if source.startswith("rel_") and target.startswith("rel_"):
        source, target = source[4:], target[4:]  # the image size cancels out
    h = None if height is None else np.asarray(height, dtype)
    w = None if width is None else np.asarray(width, dtype)
    if h is not None:
        h, w = np.broadcast_to(h, boxes.shape[:-1] + (1,)), np.broadcast_to(w, boxes.shape[:-1] + (1,))
    return _from_xyxy(_to_xyxy(boxes, source, h, w), target, h, w).astype(dtype)


def clip_to_image_size(bounding_boxes, height=None, width=None, bounding_box_format="xyxy"):
    """Clips the boxes of `{"boxes": ..., "labels": ...}` to the image.

    Boxes left with no area get the label -1. Supports "xyxy" (needs `height` and `width`)
    and "rel_xyxy" (clipped to [0, 1]); returns a new dict.
    """
    if bounding_box_format not in ("xyxy", "rel_xyxy"):
        raise NotImplementedError(
            "clip_to_image_size supports bounding_box_format 'xyxy' and 'rel_xyxy'. "
            f"Received: bounding_box_format={bounding_box_format!r}")
    if bounding_box_format == "xyxy" and (height is None or width is None):
        raise ValueError("`height` and `width` must be set if `format='xyxy'`.")
    boxes = np.asarray(bounding_boxes["boxes"])
    labels = bounding_boxes.get("labels")
    high_x, high_y = (width, height) if bounding_box_format == "xyxy" else (1.0, 1.0)
    x1, y1, x2, y2 = _columns(boxes)
    clipped = _join(np.clip(x1, 0, high_x), np.clip(y1, 0, high_y), np.clip(x2, 0, high_x),
                    np.clip(y2, 0, high_y)).astype(boxes.dtype)
    result = dict(bounding_boxes)
    result["boxes"] = clipped
    if labels is not None:
        area = (clipped[..., 2] - clipped[..., 0]) * (clipped[..., 3] - clipped[..., 1])
        result["labels"] = np.where(area > 0, np.asarray(labels), -1)
    return result


def _require_xyxy(name, bounding_box_format):
    if bounding_box_format != "xyxy":
        raise NotImplementedError(f"{name} supports bounding_box_format='xyxy' only. "
                                  f"Received: bounding_box_format={bounding_box_format!r}")


def crop(boxes, top, left, height, width, bounding_box_format="xyxy"):
    """Boxes relative to the crop window at (`top`, `left`) of size `height` x `width`,
    clipped to the window (xyxy boxes)."""
    _require_xyxy("crop", bounding_box_format)
    x1, y1, x2, y2 = _columns(np.asarray(boxes))
    return _join(np.clip(x1 - left, 0, width), np.clip(y1 - top, 0, height),
                 np.clip(x2 - left, 0, width), np.clip(y2 - top, 0, height))


def pad(boxes, top, left, height=None, width=None, bounding_box_format="xyxy"):
    """Boxes shifted by the padding added above (`top`) and left of (`left`) the image
    (xyxy boxes; `height`/`width` are accepted as Keras does and not needed)."""
    _require_xyxy("pad", bounding_box_format)
    x1, y1, x2, y2 = _columns(np.asarray(boxes))
    return _join(x1 + left, y1 + top, x2 + left, y2 + top)


def _inverse_affine(center_x, center_y, angle, translate_x, translate_y, scale, shear_x,
                    shear_y, height, width):
    # The 3x3 matrix per batch element that the image transform's inverse applies to pixel
    # coordinates (rotation, translation, scale and shear about the centre), as Keras's
    # RandomAffine-style layers build it.
    angle, shear_x, shear_y = (np.asarray(v, np.float64) for v in (angle, shear_x, shear_y))
    cx = center_x * (width - 1)
    cy = center_y * (height - 1)
    rot = -angle * math.pi / 180.0
    tx = -np.asarray(translate_x, np.float64) * (width - 1)
    ty = -np.asarray(translate_y, np.float64) * (height - 1)
    sx = -shear_x * math.pi / 180.0
    sy = -shear_y * math.pi / 180.0
    a = np.cos(rot - sy) / np.cos(sy)
    b = a * np.tan(sx) + np.sin(rot)
    c = -np.sin(rot - sy) / np.cos(sy)
    d = np.cos(rot) - c * np.tan(sx)
    scale = np.asarray(scale, np.float64)
    m00, m01, m10, m11 = d * scale, -b * scale, -c * scale, a * scale
    m02 = cx - m00 * (cx + tx) - m01 * (cy + ty)
    m12 = cy - m10 * (cx + tx) - m11 * (cy + ty)
    return np.stack([np.stack([m00, m01, m02], -1), np.stack([m10, m11, m12], -1)], -2)


def affine_transform(boxes, angle, translate_x, translate_y, scale, shear_x, shear_y, height,
                     width, center_x=None, center_y=None, bounding_box_format="xyxy"):
    """The axis-aligned boxes enclosing `boxes` (batch, N, 4) after the affine transform
    with per-batch `angle`, `shear_x`, `shear_y` (degrees), `translate_x`/`translate_y`
    (fractions of the size) and `scale` about (`center_x`, `center_y`) (fractions, default
    the centre). xyxy boxes only."""
    _require_xyxy("affine_transform", bounding_box_format)
    boxes = np.asarray(boxes, np.float64)
    matrix = _inverse_affine(0.5 if center_x is None else center_x,
                             0.5 if center_y is None else center_y, angle, translate_x,
                             translate_y, scale, shear_x, shear_y, height, width)
    x1, y1, x2, y2 = (boxes[..., i] for i in range(4))
    corners = np.stack([np.stack(p, -1) for p in ((x1, y1), (x2, y1), (x2, y2), (x1, y2))], -2)
    homogeneous = np.concatenate([corners, np.ones(corners.shape[:-1] + (1,))], -1)
    moved = np.einsum("bnkj,bij->bnki", homogeneous, matrix)
    return np.concatenate([moved.min(axis=2), moved.max(axis=2)], -1).astype(np.float32)


def _image_size(image_shape):
    if image_shape is None:
        return None, None
    height, width, _ = image_shape
    return height, width


def compute_iou(boxes1, boxes2, bounding_box_format, use_masking=False, mask_val=-1,
                image_shape=None):
    """Pairwise intersection over union: (N, 4) x (M, 4) -> (N, M), with a batch axis when
    either input has one.

    Args:
        boxes1, boxes2: boxes in `bounding_box_format`, rank 2 or 3.
        bounding_box_format: their format; a relative one needs `image_shape`.
        use_masking: set the IoU of boxes whose coordinates are all negative to `mask_val`.
        mask_val: the masked value.
        image_shape: (height, width, channels).
    """
    boxes1, boxes2 = np.asarray(boxes1), np.asarray(boxes2)
    for name, b in (("boxes1", boxes1), ("boxes2", boxes2)):
        if b.ndim not in (2, 3):
            raise ValueError(f"compute_iou() expects {name} to be batched, or to be unbatched. "
                             f"Received len(boxes1.shape)={boxes1.ndim}, "
                             f"len(boxes2.shape)={boxes2.ndim}. Expected either "
                             f"len({name}.shape)=2 AND or len({name}.shape)=3.")
    if "rel" in bounding_box_format and image_shape is None:
        raise ValueError("When using relative bounding box formats (e.g. `rel_yxyx`) the "
                         f"`image_shape` argument must be provided. Received `image_shape`: "
                         f"{image_shape}")
    height, width = _image_size(image_shape)
    b1 = convert_format(boxes1, bounding_box_format, "xyxy", height, width)
    b2 = convert_format(boxes2, bounding_box_format, "xyxy", height, width)
    p = b1[..., :, None, :]
    q = b2[..., None, :, :] if b2.ndim == 3 else b2[None, :, :]
    inter_w = np.maximum(0.0, np.minimum(p[..., 2], q[..., 2]) - np.maximum(p[..., 0], q[..., 0]))
    inter_h = np.maximum(0.0, np.minimum(p[..., 3], q[..., 3]) - np.maximum(p[..., 1], q[..., 1]))
    inter = inter_w * inter_h
    area1 = (p[..., 2] - p[..., 0]) * (p[..., 3] - p[..., 1])
    area2 = (q[..., 2] - q[..., 0]) * (q[..., 3] - q[..., 1])
    iou = (inter / (area1 + area2 - inter + _EPSILON)).astype(np.float32)
    if not use_masking:
        return iou
    masked = (b1.max(axis=-1) < 0)[..., :, None] | (b2.max(axis=-1) < 0)[..., None, :]
    return np.where(masked, np.float32(mask_val), iou)


def compute_ciou(boxes1, boxes2, bounding_box_format, image_shape=None):
    """Complete IoU of matching boxes (..., 4) and (..., 4) -> (...): IoU minus the centre
    distance over the enclosing box's diagonal (squared) and an aspect-ratio term."""
    if "rel" in bounding_box_format:
        raise ValueError("When using relative bounding box formats (e.g. `rel_yxyx`) the "
                         f"`image_shape` argument must be provided. Received `image_shape`: "
                         f"{image_shape}")
    height, width = _image_size(image_shape)
    b1 = convert_format(boxes1, bounding_box_format, "xyxy", height, width)
    b2 = convert_format(boxes2, bounding_box_format, "xyxy", height, width)
    x1a, y1a, x2a, y2a = (b1[..., i] for i in range(4))
    x1b, y1b, x2b, y2b = (b2[..., i] for i in range(4))
    w1, h1 = x2a - x1a, y2a - y1a + _EPSILON
    w2, h2 = x2b - x1b, y2b - y1b + _EPSILON
    inter = (np.maximum(np.minimum(x2a, x2b) - np.maximum(x1a, x1b), 0)
             * np.maximum(np.minimum(y2a, y2b) - np.maximum(y1a, y1b), 0))
    union = w1 * h1 + w2 * h2 - inter + _EPSILON
    iou = inter / (union + _EPSILON)
    diag = ((np.maximum(x2a, x2b) - np.minimum(x1a, x1b)) ** 2
            + (np.maximum(y2a, y2b) - np.minimum(y1a, y1b)) ** 2 + _EPSILON)
    centres = ((x1a + x2a) / 2 - (x1b + x2b) / 2) ** 2 + ((y1a + y2a) / 2 - (y1b + y2b) / 2) ** 2
    v = (4 / math.pi ** 2) * (np.arctan(w2 / h2) - np.arctan(w1 / h1)) ** 2
    alpha = v / (v - iou + (1 + _EPSILON))
    return (iou - (centres / diag + v * alpha)).astype(np.float32)


def _check_variance_and_format(variance, fmt, arg):
    if variance is not None:
        variance = np.asarray(variance, np.float32)
        if variance.shape[-1:] != (4,):
            raise ValueError(f"`variance` must be length 4, got {variance}")
    if fmt not in ("center_xywh", "center_yxhw"):
        raise ValueError(f"`{arg}` should be one of 'center_xywh' or 'center_yxhw', got {fmt}")
    return variance


def encode_box_to_deltas(anchors, boxes, anchor_format, box_format,
                         encoding_format="center_yxhw", variance=None, image_shape=None):
    """Regression targets of `boxes` against `anchors`: the centre offset over the anchor
    size and the log of the size ratio, in `encoding_format`'s order, divided by `variance`.
    """
    variance = _check_variance_and_format(variance, encoding_format, "encoding_format")
    height, width = _image_size(image_shape)
    a = convert_format(anchors, anchor_format, encoding_format, height, width)
    b = convert_format(boxes, box_format, encoding_format, height, width)
    a_size = np.maximum(a[..., 2:], _EPSILON)
    b_size = np.maximum(b[..., 2:], _EPSILON)
    deltas = np.concatenate([(b[..., :2] - a[..., :2]) / a_size, np.log(b_size / a_size)], -1)
    return deltas if variance is None else deltas / variance


def decode_deltas_to_boxes(anchors, boxes_delta, anchor_format, box_format,
                           encoded_format="center_yxhw", variance=None, image_shape=None):
    """Boxes in `box_format` from deltas made by `encode_box_to_deltas` (its inverse);
    `anchors` and `boxes_delta` may be dicts of levels, decoded level by level."""
    variance = _check_variance_and_format(variance, encoded_format, "encoded_format")
    height, width = _image_size(image_shape)

    def decode(anchor, delta):
        a = convert_format(anchor, anchor_format, encoded_format, height, width)
        delta = np.asarray(delta, np.float32)
        if variance is not None:
            delta = delta * variance
        box = np.concatenate([delta[..., :2] * a[..., 2:] + a[..., :2],
                              np.exp(delta[..., 2:]) * a[..., 2:]], -1)
        return convert_format(box, encoded_format, box_format, height, width)

    if isinstance(anchors, dict) and isinstance(boxes_delta, dict):
        return {level: decode(anchor, boxes_delta[level]) for level, anchor in anchors.items()}
    return decode(anchors, boxes_delta)
