"""Shared argument handling of `fkeras.ops.image`: data formats, ranks, and moving images to
a batched channels-last layout and back (with differentiable ops)."""

from fkeras.engine.keras_tensor import KerasTensor



class UnknownChoiceError(ValueError, NotImplementedError):
    """An argument outside its choices: a ValueError that Keras 3's `except
    NotImplementedError` (its type for these: an unknown fill_mode / interpolation / spline
    order) also catches."""

def data_format_of(data_format):
    if data_format is None:
        from fkeras.backend import image_data_format

        return image_data_format()
    data_format = str(data_format).lower()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError("The `data_format` argument must be one of {'channels_first', "
                         f"'channels_last'}}. Received: data_format={data_format}")
    return data_format


def as_tensor(x):
    if isinstance(x, KerasTensor):
        return x
    from fkeras import ops

    return ops.convert_to_tensor(x)


def check_rank(images, name="images", ranks=(3, 4)):
    if len(images.shape) not in ranks:
        raise ValueError("Invalid images rank: expected rank 3 (single image) or rank 4 "
                         f"(batch of images). Received input with shape: "
                         f"{name}.shape={tuple(images.shape)}")


def to_nhwc(images, data_format, batched_rank=4):
    """(images as a batched channels-last tensor, whether a batch axis was added)."""
    from fkeras import ops

    unbatched = len(images.shape) == batched_rank - 1
    if unbatched:
        images = ops.expand_dims(images, 0)
    if data_format == "channels_first":
        images = ops.moveaxis(images, 1, -1)
    return images, unbatched


def from_nhwc(images, data_format, unbatched):
    from fkeras import ops

    if data_format == "channels_first":
        images = ops.moveaxis(images, -1, 1)
    if unbatched:
        images = ops.squeeze(images, 0)
    return images


def integer_dtype(images):
    """The images' dtype name when it is an integer type (computed in float32 and cast back,
    as Keras's torch backend does), else None."""
    dtype = str(images.dtype)
    return dtype if ("int" in dtype or dtype == "bool") else None


def float_images(images, dtype):
    from fkeras import ops

    return ops.cast(images, "float32") if dtype else images


def cast_back(y, dtype, rounding=False):
    """y cast back to the integer `dtype`: exact values, truncated (torch's `.to`), or rounded
    and saturated to the type's range (`rounding=True`, Keras's resize)."""
    if not dtype:
        return y
    import numpy as np

    from fkeras import ops

    if rounding:
        info = np.iinfo(dtype)
        y = ops.clip(ops.round(y), float(info.min), float(info.max))
    return ops.cast(y, dtype)
