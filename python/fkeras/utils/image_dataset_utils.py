"""`image_dataset_from_directory` (Keras 3.15's arguments): image files in class folders as a
dataset of (images, labels) batches, read with Pillow (imported on first use) and resized as
Keras's own Pillow path (`format="grain"`) does: decoded, converted to the color mode, then
`ops.image.resize` semantics (`image_resize.py`)."""

import functools

import numpy as np

from fkeras.utils import directory_index, image_resize
from fkeras.utils.file_dataset import FileDataset, encode_labels

ALLOWLIST_FORMATS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")
_KERAS_INTERPOLATIONS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5",
                         "gaussian", "mitchellcubic")
_CHANNELS = {"rgb": 3, "rgba": 4, "grayscale": 1}


def load_image(path, image_size, color_mode, interpolation, data_format,
               crop_to_aspect_ratio=False, pad_to_aspect_ratio=False):
    """One image file as a float32 (H, W, C) or (C, H, W) array of `image_size`."""
    from fkeras.utils.image_utils import convert_mode, pil_image

    Image = pil_image("image_dataset_from_directory")
    with Image.open(path) as img:  # an animated GIF: its first frame
        img = convert_mode(img, color_mode)
        x = np.asarray(img, dtype=np.float32)
    if x.ndim == 2:
        x = x[..., None]
    x = image_resize.resize(x, image_size, interpolation, crop_to_aspect_ratio,
                            pad_to_aspect_ratio)
    return x.transpose(2, 0, 1) if data_format == "channels_first" else x


def _load_batch(paths, **options):
    return np.stack([load_image(p, **options) for p in paths])


def _check_args(color_mode, image_size, interpolation, crop_to_aspect_ratio,
                pad_to_aspect_ratio, data_format, format):
    if color_mode not in _CHANNELS:
        raise ValueError('`color_mode` must be one of {"rgb", "rgba", "grayscale"}. '
                         f"Received: color_mode={color_mode}")
    if isinstance(image_size, int):
        image_size = (image_size, image_size)
    elif not isinstance(image_size, (list, tuple)) or len(image_size) != 2:
        raise ValueError("Invalid `image_size` value. Expected a tuple of 2 integers. "
                         f"Received: image_size={image_size}")
    interpolation = interpolation.lower()
    if interpolation not in _KERAS_INTERPOLATIONS:
        raise ValueError(f"Argument `interpolation` should be one of {_KERAS_INTERPOLATIONS}. "
                         f"Received: interpolation={interpolation}")
    if interpolation not in image_resize.INTERPOLATIONS:
        raise ValueError(
            f"`interpolation={interpolation!r}` needs TensorFlow's image resizing, which "
            f"fkeras does not have; use one of {image_resize.INTERPOLATIONS} (Keras 3 without "
            "TensorFlow supports the same three).")
    if pad_to_aspect_ratio and crop_to_aspect_ratio:
        raise ValueError("Only one of `pad_to_aspect_ratio`, `crop_to_aspect_ratio` can be "
                         "set to `True`.")
    if format not in ("tf", "grain"):
        raise ValueError(f'`format` should be either "tf" or "grain". Received: '
                         f"format={format}")
    if data_format is None:
        from fkeras import config

        data_format = config.image_data_format()
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError("The `data_format` argument must be one of {'channels_first', "
                         f"'channels_last'}}. Received: data_format={data_format}")
    return tuple(int(s) for s in image_size), interpolation, data_format


def image_dataset_from_directory(directory, labels="inferred", label_mode="int",
                                 class_names=None, color_mode="rgb", batch_size=32,
                                 image_size=(256, 256), shuffle=True, seed=None,
                                 validation_split=None, subset=None, interpolation="bilinear",
                                 follow_links=False, crop_to_aspect_ratio=False,
                                 pad_to_aspect_ratio=False, data_format=None, format="tf",
                                 verbose=True):
    """Generates a dataset of image batches from the files of a directory.

    With `labels="inferred"`, each subdirectory of `directory` is a class (label i for the
    i-th of `class_names`, sorted by default); the `.bmp`, `.gif`, `.jpeg`, `.jpg` and `.png`
    files found under it (recursively) are its samples.

    Args:
        directory: the data directory.
        labels: `"inferred"`, None (images only), or a list/tuple of integer labels, one per
            file in the sorted order of the file paths.
        label_mode: `"int"` (int32, shape (batch,)), `"categorical"` (one-hot float32),
            `"binary"` (float32 (batch, 1), exactly 2 classes) or None (images only).
        class_names: with `labels="inferred"`, the subdirectories to use, in label order.
        color_mode: `"grayscale"`, `"rgb"` or `"rgba"` (1, 3 or 4 channels).
        batch_size: samples per batch (None: single samples).
        image_size: `(height, width)` every image is resized to.
        shuffle: shuffle the files (needs `seed` with `validation_split`) and read each
            pass in a fresh order; False: sorted order.
        seed: the shuffle seed.
        validation_split: the fraction of files kept for validation (the last ones).
        subset: `"training"`, `"validation"` or `"both"` (returns both datasets).
        interpolation: `"bilinear"`, `"nearest"` or `"bicubic"` (Keras's other names, which
            need TensorFlow, raise ValueError).
        follow_links: whether to follow symbolic links to subdirectories.
        crop_to_aspect_ratio: resize the centred crop of the target's aspect ratio.
        pad_to_aspect_ratio: pad (with zeros) to the target's aspect ratio, then resize.
        data_format: `"channels_last"` or `"channels_first"` (None: the configured one).
        format: `"tf"` or `"grain"`, accepted for Keras's code; both return fkeras's dataset.
        verbose: print the number of files and classes found.

    Returns:
        A `FileDataset` of float32 image batches (with labels unless `label_mode` is None)
        with `class_names` and `file_paths`; a list of two for `subset="both"`.

    Example:
    ```python
    train, val = fkeras.utils.image_dataset_from_directory(
        "flowers/", image_size=(64, 64), validation_split=0.2, subset="both", seed=1337)
    model.fit(train, validation_data=val, epochs=3)
    ```
    """
    labels, label_mode = directory_index.check_labels_args(labels, label_mode, class_names,
                                                           "image")
    image_size, interpolation, data_format = _check_args(
        color_mode, image_size, interpolation, crop_to_aspect_ratio, pad_to_aspect_ratio,
        data_format, format)
    directory_index.check_validation_split_arg(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = np.random.randint(1e6)
    paths, labels, class_names = directory_index.index_directory(
        directory, labels, ALLOWLIST_FORMATS, class_names=class_names, shuffle=shuffle,
        seed=seed, follow_links=follow_links, verbose=verbose)
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError('When passing `label_mode="binary"`, there must be exactly 2 '
                         f"class_names. Received: class_names={class_names}")
    load = functools.partial(_load_batch, image_size=image_size, color_mode=color_mode,
                             interpolation=interpolation, data_format=data_format,
                             crop_to_aspect_ratio=crop_to_aspect_ratio,
                             pad_to_aspect_ratio=pad_to_aspect_ratio)

    def dataset(part, shuffled, what=""):
        part_paths, part_labels = directory_index.training_or_validation_split(
            paths, labels, validation_split, part)
        if not part_paths:
            raise ValueError(f"No {what}images found in directory {directory}. Allowed "
                             f"formats: {ALLOWLIST_FORMATS}")
        encoded = None if label_mode is None else encode_labels(
            part_labels, label_mode, len(class_names))
        return FileDataset(part_paths, encoded, load, batch_size, shuffled, seed, class_names)

    if subset == "both":
        return [dataset("training", shuffle, "training "),
                dataset("validation", False, "validation ")]
    return dataset(subset, shuffle)
