"""Pooling as ONNX MaxPool / AveragePool (1-3D, valid/same) and global pooling as reductions.

Average pooling with "same" padding divides by the number of real (unpadded) elements, as
Keras does: ONNX's count_include_pad=0.
"""

from fkeras.export.converters.base import channels_to_back, channels_to_front, converts
from fkeras.export.converters.conv import spatial_sizes, window_pads
from fkeras.layers.pooling.average_pooling import AveragePooling1D, AveragePooling3D
from fkeras.layers.pooling.average_pooling2d import AveragePooling2D
from fkeras.layers.pooling.global_pooling import (
    GlobalAveragePooling1D,
    GlobalAveragePooling2D,
    GlobalAveragePooling3D,
    GlobalMaxPooling1D,
    GlobalMaxPooling2D,
    GlobalMaxPooling3D,
)
from fkeras.layers.pooling.max_pooling import MaxPooling1D, MaxPooling3D
from fkeras.layers.pooling.max_pooling2d import MaxPooling2D

_MAX = (MaxPooling1D, MaxPooling2D, MaxPooling3D)


@converts(MaxPooling1D, MaxPooling2D, MaxPooling3D, AveragePooling1D, AveragePooling2D,
          AveragePooling3D)
def convert_pooling(call):
    b, layer, rank = call.b, call.layer, call.rank
    last = layer.data_format != "channels_first"
    x = channels_to_front(b, call.x, rank) if last else call.x
    ones = [1] * len(layer.pool_size)
    pads, auto = window_pads(spatial_sizes(call.shape, layer.data_format), layer.pool_size,
                             layer.strides, ones, layer.padding)
    is_max = isinstance(layer, _MAX)
    y = b.op("MaxPool" if is_max else "AveragePool", [x], hint=layer.name,
             kernel_shape=list(layer.pool_size), strides=list(layer.strides), pads=pads,
             auto_pad=auto, count_include_pad=None if is_max else 0)
    return [channels_to_back(b, y, rank) if last else y]


@converts(GlobalAveragePooling1D, GlobalAveragePooling2D, GlobalAveragePooling3D,
          GlobalMaxPooling1D, GlobalMaxPooling2D, GlobalMaxPooling3D)
def convert_global_pooling(call):
    layer = call.layer
    if call.kwargs.get("mask") is not None or (call.masked and
                                               isinstance(layer, GlobalAveragePooling1D)):
        call.refuse_mask()
    op = "ReduceMax" if "Max" in type(layer).__name__ else "ReduceMean"
    axes = list(layer._axes())
    return [call.b.reduce(op, call.x, axes, keepdims=layer.keepdims)]
