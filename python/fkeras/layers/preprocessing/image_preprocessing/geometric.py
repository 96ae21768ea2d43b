"""Shared pieces of the affine augmentation layers (RandomRotation, RandomZoom,
RandomTranslation, RandomShear): argument checks and the `fill_mode` / `interpolation` /
`fill_value` sampling of `transforms.affine_transform`."""

from fkeras.layers.preprocessing.image_preprocessing import bounding_boxes as bbox
from fkeras.layers.preprocessing.image_preprocessing import transforms
from fkeras.layers.preprocessing.image_preprocessing.base import (
    BaseImagePreprocessingLayer,
    check_choice,
)


class AffineLayer(BaseImagePreprocessingLayer):
    """Base of the layers whose transformation is one affine matrix per image."""

    _SUPPORTED_FILL_MODE = ("reflect", "wrap", "constant", "nearest")
    _SUPPORTED_INTERPOLATION = ("nearest", "bilinear")
    _MATRIX_KEY = "matrix"

    def _set_sampling(self, fill_mode, interpolation, fill_value):
        check_choice(fill_mode, self._SUPPORTED_FILL_MODE, "fill_mode")
        check_choice(interpolation, self._SUPPORTED_INTERPOLATION, "interpolation")
        self.fill_mode = fill_mode
        self.interpolation = interpolation
        self.fill_value = fill_value

    def _matrix(self, transformation, height, width):
        return transformation[self._MATRIX_KEY]

    def _transform_images(self, images, transformation, interpolation):
        matrix = self._matrix(transformation, images.shape[1], images.shape[2])
        return transforms.affine_transform(images, matrix, interpolation, self.fill_mode,
                                           float(self.fill_value))

    def transform_bounding_boxes(self, bounding_boxes, transformation, training=True):
        """Boxes follow the warp (each becomes the bounding box of its warped corners) and
        are clipped to the image; empty ones get label -1 (Keras)."""
        if not training or transformation is None:
            return bounding_boxes
        height, width = self._transformation_hw(transformation)
        return warp_boxes(self.bounding_box_format, bounding_boxes,
                          self._matrix(transformation, height, width), height, width)

    def _transformation_hw(self, transformation):
        if "input_shape" in transformation:
            return self._hw(transformation["input_shape"])
        return transformation["image_height"], transformation["image_width"]

    def _batch_hw(self, data):
        images = data["images"] if isinstance(data, dict) else data
        shape = tuple(images.shape)
        batch = shape[0] if len(shape) == 4 else 1
        return shape, batch, self._hw(shape)


def warp_boxes(fmt, bounding_boxes, transform, height, width):
    """`bounding_boxes` ({"boxes", "labels"} in `fmt`) through the image warp `transform`
    (B, 8), clipped to the (height, width) image; empty boxes get label -1."""
    boxes = bbox.to_xyxy(bounding_boxes["boxes"], fmt, height, width)
    out = bbox.clip_xyxy(dict(bounding_boxes, boxes=bbox.warp_xyxy(boxes, transform)),
                         height, width)
    out["boxes"] = bbox.from_xyxy(out["boxes"], fmt, height, width)
    return out


def split_factor(factor, name, error, check):
    """(lower, upper) from a number or a pair, each entry validated by `check`; Keras's
    error text otherwise."""
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2:
            raise ValueError(error + f"Received: {name}={factor}")
        check(factor[0])
        check(factor[1])
        return tuple(sorted(factor))
    if isinstance(factor, (int, float)) and not isinstance(factor, bool):
        check(factor)
        return (-abs(factor), abs(factor))
    raise ValueError(error + f"Received: {name}={factor}")
