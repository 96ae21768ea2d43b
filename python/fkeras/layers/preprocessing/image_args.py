"""Argument checks and layout moves shared by the image preprocessing layers (Resizing,
CenterCrop): positive sizes, `data_format`, rank-3 (one image) or rank-4 (a batch) inputs
brought to channels-last (N, H, W, C) and back."""

import numpy as np

from fkeras import config as fk_config
from fkeras import ops


def positive_int(value, what, layer_name):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f'Layer "{layer_name}": `{what}` must be a positive integer. '
                         f"Received: {what}={value!r}")
    return int(value)


def data_format_of(data_format, layer_name):
    value = fk_config.image_data_format() if data_format is None else str(data_format).lower()
    if value not in ("channels_last", "channels_first"):
        raise ValueError(f'Layer "{layer_name}": the `data_format` argument must be one of '
                         '{"channels_first", "channels_last"}. Received: '
                         f"data_format={data_format!r}")
    return value


def check_rank(shape, layer_name):
    if len(shape) not in (3, 4):
        raise ValueError(f'Layer "{layer_name}": invalid images rank: expected rank 3 (single '
                         "image) or rank 4 (batch of images). Received input with shape: "
                         f"{tuple(shape)}")


def hw_axes(rank, data_format):
    """The (height, width) axes of a rank-3/4 input."""
    first = rank - 3 if data_format == "channels_last" else rank - 2
    return first, first + 1


def with_size(shape, size, data_format):
    """`shape` with its height and width replaced by `size`."""
    shape = list(shape)
    h, w = hw_axes(len(shape), data_format)
    shape[h], shape[w] = size
    return tuple(shape)


def to_nhwc(x, data_format):
    """A rank-4 channels-last view of a rank-3/4 input."""
    if np.ndim(x) == 3:
        x = ops.expand_dims(x, 0)
    if data_format == "channels_first":
        x = ops.transpose(x, (0, 2, 3, 1))
    return x


def from_nhwc(y, rank, data_format):
    if data_format == "channels_first":
        y = ops.transpose(y, (0, 3, 1, 2))
    if rank == 3:
        y = ops.squeeze(y, 0)
    return y


def shape_of(x):
    """The shape of an array, Tensor or KerasTensor as a tuple."""
    return tuple(x.shape) if hasattr(x, "shape") else tuple(np.shape(x))
