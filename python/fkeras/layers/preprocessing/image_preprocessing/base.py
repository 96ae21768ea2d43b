"""BaseImagePreprocessingLayer: what every augmentation layer shares.

A call draws a transformation (`get_random_transformation`, a dict of NumPy arrays, one entry
per image), then applies it (`transform_images`, and for dict inputs `transform_labels`,
`transform_segmentation_masks`, `transform_bounding_boxes`). Inputs are batched (rank 4) or
single images (rank 3, treated as a batch of one), in `data_format`; the transforms work on
NHWC arrays (`to_nhwc` / `from_nhwc`). As Keras 3, `training` defaults to True for a direct
call; `fit` passes True and `predict` / `evaluate` pass False (then most layers are the
identity).

Randomness: each layer owns a `fkeras.random.SeedGenerator(seed)`; each call takes the next
seed of that stream and draws from a NumPy Generator seeded with it, so the same `seed`
gives the same sequence of draws on every run (different from Keras's numbers).
"""

import numpy as np

from fkeras import random as fk_random
from fkeras.backend import devices as _devices
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.layer import Layer
from fkeras.ops.image_layout import UnknownChoiceError


def standardize_data_format(data_format):
    """"channels_last" / "channels_first"; None is the configured image data format."""
    if data_format is None:
        from fkeras import config

        return config.image_data_format()
    value = str(data_format).lower()
    if value not in ("channels_last", "channels_first"):
        raise ValueError("The `data_format` argument must be one of {'channels_first', "
                         f"'channels_last'}}. Received: data_format={data_format}")
    return value


def check_choice(value, choices, what):
    """Keras's error (and text) for an unknown fill_mode / interpolation."""
    if value not in choices:
        raise UnknownChoiceError(f"Unknown `{what}` {value}. Expected of one {choices}.")


class BaseImagePreprocessingLayer(Layer):
    """Base class of the image augmentation layers (Keras's BaseImagePreprocessingLayer).

    Args:
        factor: the strength of the augmentation, a number or a (lower, upper) pair, checked
            against the class's `_FACTOR_BOUNDS` (layers with their own factors set
            `_USE_BASE_FACTOR = False`).
        bounding_box_format: the format of `"bounding_boxes"` in dict inputs ("xyxy",
            "rel_xyxy", "xywh", "center_xywh", "yxyx", ...), for the layers that move boxes.
        data_format: "channels_last", "channels_first" or None (the configured default).
    """

    _USE_BASE_FACTOR = True
    _FACTOR_BOUNDS = (-1, 1)
    _fk_float_inputs = True

    def __init__(self, factor=None, bounding_box_format=None, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.bounding_box_format = bounding_box_format
        self.data_format = standardize_data_format(data_format)
        if self._USE_BASE_FACTOR:
            self._set_factor(factor or 0.0)
        elif factor is not None:
            raise ValueError(f"Layer {type(self).__name__} does not take a `factor` argument. "
                             f"Received: factor={factor}")
        self.built = True

    def _set_factor(self, factor):
        lo_bound, hi_bound = self._FACTOR_BOUNDS
        error = ("The `factor` argument should be a number (or a list of two numbers) in the "
                 f"range [{lo_bound}, {hi_bound}]. Received: factor={factor}")
        if isinstance(factor, (tuple, list)):
            if len(factor) != 2 or factor[0] > hi_bound or factor[1] < lo_bound:
                raise ValueError(error)
            lower, upper = sorted(factor)
        elif isinstance(factor, (int, float)) and not isinstance(factor, bool):
            if factor < lo_bound or factor > hi_bound:
                raise ValueError(error)
            factor = abs(factor)
            lower, upper = max(-factor, lo_bound), factor
        else:
            raise ValueError(error)
        self.factor = (lower, upper)

    _VALUE_RANGE_VALIDATION_ERROR = ("The `value_range` argument should be a list of two "
                                     "numbers. ")

    def _set_value_range(self, value_range):
        """Keras's check: a list/tuple of two numbers, stored sorted (a list)."""
        if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
            raise ValueError(self._VALUE_RANGE_VALIDATION_ERROR +
                             f"Received: value_range={value_range}")
        self.value_range = sorted(value_range)

    def _set_factor_by_name(self, factor, name):
        """Like `_set_factor` for a second argument (`scale`, `sigma`), Keras's text."""
        lo_bound, hi_bound = self._FACTOR_BOUNDS
        error = (f"The `{name}` argument should be a number (or a list of two numbers) in the "
                 f"range [{lo_bound}, {hi_bound}]. Received: factor={factor}")
        if isinstance(factor, (tuple, list)):
            if len(factor) != 2 or factor[0] > hi_bound or factor[1] < lo_bound:
                raise ValueError(error)
            return tuple(sorted(factor))
        if isinstance(factor, (int, float)) and not isinstance(factor, bool):
            if factor < lo_bound or factor > hi_bound:
                raise ValueError(error)
            return (max(-abs(factor), lo_bound), abs(factor))
        raise ValueError(error)

    @staticmethod
    def _batch_size(data):
        images = data["images"] if isinstance(data, dict) else data
        shape = np.shape(images)
        return shape[0] if len(shape) == 4 else 1

    def _apply_mask(self, rng, batch):
        """Keras's per-image coin: threshold ~ U(0, 1) < probability ~ U(factor)."""
        probability = rng.uniform(self.factor[0], self.factor[1], size=(batch,))
        return rng.uniform(0.0, 1.0, size=(batch,)) < probability

    # ---- randomness ----
    def _make_generator(self, seed):
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ValueError(f"`seed` must be an int or None. Received: seed={seed!r}")
        self.seed = seed
        self.generator = fk_random.SeedGenerator(seed)

    def _rng(self, seed=None):
        """A NumPy Generator for one call: from `seed` when given, else the layer's stream."""
        if seed is None:
            seed = self.generator.next()
        return np.random.default_rng(seed)

    # ---- the transformation interface (Keras's names) ----
    def get_random_transformation(self, data, training=True, seed=None):
        """The random parameters of one call (None when nothing is drawn)."""
        return None

    def transform_images(self, images, transformation, training=True):
        """Applies `transformation` to a batch of images (identity unless training)."""
        images = np.asarray(images, dtype=np.float32)
        if not training or transformation is None:
            return images
        return self.from_nhwc(self._transform_images(self.to_nhwc(images), transformation,
                                                     getattr(self, "interpolation", None)))

    def transform_labels(self, labels, transformation, training=True):
        return labels

    def transform_segmentation_masks(self, segmentation_masks, transformation, training=True):
        masks = np.asarray(segmentation_masks)
        if not training or transformation is None:
            return masks
        return self.from_nhwc(self._transform_images(self.to_nhwc(masks), transformation,
                                                     "nearest"))

    def transform_bounding_boxes(self, bounding_boxes, transformation, training=True):
        """Boxes unchanged: the default for layers that change pixel values, not positions
        (Keras's color layers do the same); every layer that moves pixels overrides it."""
        return bounding_boxes

    # ---- layouts ----
    def to_nhwc(self, images):
        return images if self.data_format == "channels_last" else \
            np.transpose(images, (0, 2, 3, 1))

    def from_nhwc(self, images):
        images = images if self.data_format == "channels_last" else \
            np.transpose(images, (0, 3, 1, 2))
        return np.ascontiguousarray(images, dtype=np.float32)

    def _hw(self, shape):
        """(height, width) of a batched or single-image shape."""
        if self.data_format == "channels_last":
            return shape[-3], shape[-2]
        return shape[-2], shape[-1]

    def _transform_value_range(self, images, original_range, target_range):
        """Rescales `images` from `original_range` to `target_range` (float32)."""
        if tuple(original_range) == tuple(target_range):
            return images
        lo, hi = (float(v) for v in original_range)
        t_lo, t_hi = (float(v) for v in target_range)
        return ((images - lo) / (hi - lo) * (t_hi - t_lo) + t_lo).astype(np.float32)

    # ---- calling ----
    @staticmethod
    def _check_rank(shape):
        if len(shape) not in (3, 4):
            raise ValueError("Expected image tensor to have rank 3 (single image) or 4 (batch "
                             f"of images). Received: data.shape={tuple(shape)}")
        return len(shape) == 4

    def call(self, data, training=True):
        training = bool(training)  # an explicit None is inference, as Keras 3.15
        if isinstance(data, dict):
            if any(isinstance(v, KerasTensor) for v in data.values()):
                return self._symbolic_dict(data)
            return self._call_dict(dict(data), training)
        if isinstance(data, KerasTensor):
            self._check_rank(data.shape)
            return KerasTensor(self.compute_output_shape(data.shape), "float32")
        if training:
            self._refuse_if_differentiated(data)
        images = _devices.host_array(data, np.float32)  # (NumPy code: on the host)
        batched = self._check_rank(images.shape)
        batch = images if batched else images[None]
        transformation = self.get_random_transformation(batch, training=training)
        out = self.transform_images(batch, transformation, training=training)
        return out if batched else out[0]

    def _refuse_if_differentiated(self, data):
        """The augmentations compute in NumPy, off the tape: on a value an active GradientTape
        differentiates (the output of a trainable layer), training=True would silently cut the
        gradient, so it is an error instead (Keras differentiates the smooth ones)."""
        from fkeras.engine import tape as _tape

        buffer = getattr(data, "_value", data)
        for tape in getattr(_tape._state, "stack", None) or ():
            if id(buffer) in tape._tracked:
                raise TypeError(
                    f"Layer '{self.name}' ({type(self).__name__}) received a tensor that a "
                    "GradientTape differentiates, in training mode: fkeras's augmentation "
                    "layers do not propagate gradients, so the layers before it would not "
                    "train. Place augmentation layers directly after the model's inputs (or "
                    "apply them to the data) instead.")

    def _call_dict(self, data, training):
        images = _devices.host_array(data["images"], dtype=np.float32)
        batched = self._check_rank(images.shape)
        one = (lambda v: v) if batched else (lambda v: np.asarray(v)[None])
        back = (lambda v: v) if batched else (lambda v: v[0])
        batch = one(images)
        transformation = self.get_random_transformation({**data, "images": batch},
                                                        training=training)
        out = {**data, "images": back(self.transform_images(batch, transformation, training))}
        if "bounding_boxes" in data:
            if not self.bounding_box_format:
                raise ValueError(
                    "You passed an input with a 'bounding_boxes' key, but you didn't specify a "
                    "bounding box format. Pass a `bounding_box_format` argument to your "
                    f"{type(self).__name__} layer, e.g. `bounding_box_format='xyxy'`.")
            boxes = {k: one(np.asarray(v, dtype=np.float32 if k == "boxes" else None))
                     for k, v in data["bounding_boxes"].items()}
            boxes = self.transform_bounding_boxes(boxes, transformation, training)
            out["bounding_boxes"] = {k: back(np.asarray(v)) for k, v in boxes.items()}
        if "labels" in data:
            out["labels"] = back(np.asarray(self.transform_labels(
                one(_devices.host_array(data["labels"], dtype=np.float32)), transformation, training)))
        if "segmentation_masks" in data:
            out["segmentation_masks"] = back(self.transform_segmentation_masks(
                one(_devices.host_array(data["segmentation_masks"], dtype=np.float32)), transformation,
                training))
        return out

    def _symbolic_dict(self, data):
        out = {}
        for key, value in data.items():
            if isinstance(value, dict):  # bounding_boxes: {"boxes", "labels"}
                out[key] = self._symbolic_dict(value)
                continue
            shape = value.shape if isinstance(value, KerasTensor) else np.shape(value)
            if key in ("images", "segmentation_masks"):
                shape = self.compute_output_shape(shape)
            out[key] = KerasTensor(tuple(shape), "float32")
        return out

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config["data_format"] = self.data_format
        if self.bounding_box_format is not None:
            config["bounding_box_format"] = self.bounding_box_format
        return config
