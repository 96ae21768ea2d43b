"""Reshaping layers: Reshape, Flatten, Permute, RepeatVector, ZeroPadding1-3D (Pad),
Cropping1-3D (Slice), UpSampling1-3D (Resize: nearest repeats, bilinear with half-pixel
centres)."""

import numpy as np

from fkeras.export.converters.base import converts
from fkeras.layers.reshaping.cropping import Cropping1D, Cropping2D, Cropping3D
from fkeras.layers.reshaping.flatten import Flatten
from fkeras.layers.reshaping.permute import Permute
from fkeras.layers.reshaping.repeat_vector import RepeatVector
from fkeras.layers.reshaping.reshape import Reshape
from fkeras.layers.reshaping.up_sampling import UpSampling1D, UpSampling2D, UpSampling3D
from fkeras.layers.reshaping.zero_padding import ZeroPadding1D, ZeroPadding2D, ZeroPadding3D


@converts(Reshape)
def convert_reshape(call):
    target = list(call.layer.target_shape)
    if 0 in target:
        raise call.fail("a target dimension of size 0 is not supported")
    return [call.b.reshape(call.x, [0] + target, hint=call.layer.name)]


@converts(Flatten)
def convert_flatten(call):
    b, x, rank = call.b, call.x, call.rank
    if call.layer.data_format == "channels_first" and rank > 2:
        x = b.transpose(x, [0] + list(range(2, rank)) + [1])
    return [b.op("Flatten", [x], axis=1, hint=call.layer.name)]


@converts(Permute)
def convert_permute(call):
    return [call.b.transpose(call.x, [0] + [int(d) for d in call.layer.dims],
                             hint=call.layer.name)]


@converts(RepeatVector)
def convert_repeat_vector(call):
    b = call.b
    y = b.unsqueeze(call.x, [1])
    return [b.op("Expand", [y, b.ints([1, int(call.layer.n), 1])], hint=call.layer.name)]


@converts(ZeroPadding1D, ZeroPadding2D, ZeroPadding3D)
def convert_zero_padding(call):
    b = call.b
    widths = call.layer._widths(call.rank)
    pads = [int(w[0]) for w in widths] + [int(w[1]) for w in widths]
    return [b.op("Pad", [call.x, b.ints(pads, "pads"), b.scalar(0.0)], mode="constant",
                 hint=call.layer.name)]


@converts(Cropping1D, Cropping2D, Cropping3D)
def convert_cropping(call):
    big = np.iinfo(np.int64).max
    starts, ends, axes = [], [], []
    for axis, (before, after) in enumerate(call.layer._widths(call.rank)):
        if before or after:
            starts.append(int(before))
            ends.append(-int(after) if after else big)
            axes.append(axis)
    if not axes:
        return [call.b.op("Identity", [call.x])]
    return [call.b.slice(call.x, starts, ends, axes)]


@converts(UpSampling1D, UpSampling2D, UpSampling3D)
def convert_up_sampling(call):
    b, layer = call.b, call.layer
    scales = [1.0] * call.rank
    for axis, factor in zip(layer._axes(), layer._per_axis()):
        scales[axis] = float(factor)
    roi, scale_name = "", b.const(np.asarray(scales, np.float32), "scales")
    if getattr(layer, "interpolation", "nearest") == "nearest":
        return [b.op("Resize", [call.x, roi, scale_name], mode="nearest",
                     coordinate_transformation_mode="asymmetric", nearest_mode="floor",
                     hint=layer.name)]
    if layer.interpolation != "bilinear":
        raise call.fail(f'interpolation="{layer.interpolation}" has no ONNX conversion '
                        '(exportable: "nearest", "bilinear")')
    return [b.op("Resize", [call.x, roi, scale_name], mode="linear",
                 coordinate_transformation_mode="half_pixel", hint=layer.name)]
