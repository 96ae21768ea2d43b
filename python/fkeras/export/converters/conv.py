"""Convolutions as ONNX Conv / ConvTranspose: Conv1D/2D/3D (groups, dilation, causal),
Conv*Transpose, DepthwiseConv1D/2D, SeparableConv1D/2D.

ONNX convolutions are channels-first: a channels_last input is transposed to (N, C, ...) and
back. Keras kernels (k..., C_in/groups, C_out) become ONNX weights (C_out, C_in/groups, k...).
"""

import numpy as np

from fkeras.export.converters.activations import emit_activation
from fkeras.export.converters.base import channels_to_back, channels_to_front, converts
from fkeras.layers.convolutional.conv1d import Conv1D
from fkeras.layers.convolutional.conv2d import Conv2D
from fkeras.layers.convolutional.conv3d import Conv3D
from fkeras.layers.convolutional.conv_transpose import (
    Conv1DTranspose,
    Conv2DTranspose,
    Conv3DTranspose,
)
from fkeras.layers.convolutional.depthwise_conv import DepthwiseConv1D, DepthwiseConv2D
from fkeras.layers.convolutional.separable_conv import SeparableConv1D, SeparableConv2D
from fkeras.ops.conv_nd import transpose_output_size_and_padding
from fkeras.ops.conv_utils import conv_output_size_and_padding


def spatial_sizes(shape, data_format):
    return list(shape[2:]) if data_format == "channels_first" else list(shape[1:-1])


def window_pads(sizes, kernel, strides, dilations, padding):
    """ONNX `pads` (begins then ends) or an `auto_pad` for Keras's "valid"/"same"/"causal".

    Returns:
        (pads, auto_pad): one of them None."""
    rank = len(kernel)
    if padding == "valid":
        return [0] * (2 * rank), None
    if padding == "causal":  # 1-D: all the padding before
        return [(kernel[0] - 1) * dilations[0], 0], None
    if any(s is None for s in sizes):
        return None, "SAME_UPPER"  # TensorFlow's "same": the odd element goes after
    begins, ends = [], []
    for size, k, s, d in zip(sizes, kernel, strides, dilations):
        out, before = conv_output_size_and_padding(size, k, s, d, "same")
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        begins.append(before)
        ends.append(total - before)
    return begins + ends, None


def to_onnx_kernel(kernel):
    """(k..., C_in, C_out) -> (C_out, C_in, k...)."""
    rank = kernel.ndim - 2
    return np.ascontiguousarray(np.transpose(kernel, [rank + 1, rank] + list(range(rank))))


def _conv(call, x, weight, bias, kernel_size, strides, dilations, padding, group, hint):
    """One ONNX Conv on the channels-first tensor `x`."""
    b, layer = call.b, call.layer
    sizes = spatial_sizes(call.shape, layer.data_format)
    pads, auto = window_pads(sizes, kernel_size, strides, dilations, padding)
    inputs = [x, b.const(weight, f"{layer.name}/{hint}")]
    if bias is not None:
        inputs.append(b.const(bias, f"{layer.name}/bias"))
    return b.op("Conv", inputs, hint=layer.name, kernel_shape=list(kernel_size),
                strides=list(strides), dilations=list(dilations), pads=pads, auto_pad=auto,
                group=int(group))


def _wrap(call, body):
    """Runs `body(x_channels_first)` between the layout transposes, then the activation."""
    b, layer, rank = call.b, call.layer, call.rank
    last = layer.data_format != "channels_first"
    x = channels_to_front(b, call.x, rank) if last else call.x
    y = body(x)
    y = channels_to_back(b, y, rank) if last else y
    return [emit_activation(b, layer.activation, y, layer)]


@converts(Conv1D, Conv2D, Conv3D)
def convert_conv(call):
    layer = call.layer
    weight = to_onnx_kernel(call.weight(layer.kernel))
    bias = None if layer.bias is None else call.weight(layer.bias)
    return _wrap(call, lambda x: _conv(call, x, weight, bias, layer.kernel_size, layer.strides,
                                       layer.dilation_rate, layer.padding, layer.groups,
                                       "kernel"))


def _depthwise_weight(kernel):
    """(k..., C, M) -> ONNX grouped weight (C * M, 1, k...), channel c * M + m as Keras."""
    shape = kernel.shape
    return to_onnx_kernel(kernel.reshape(shape[:-2] + (1, shape[-2] * shape[-1])))


@converts(DepthwiseConv1D, DepthwiseConv2D)
def convert_depthwise(call):
    layer = call.layer
    kernel = call.weight(layer.kernel)
    bias = None if layer.bias is None else call.weight(layer.bias)
    return _wrap(call, lambda x: _conv(call, x, _depthwise_weight(kernel), bias,
                                       layer.kernel_size, layer.strides, layer.dilation_rate,
                                       layer.padding, kernel.shape[-2], "depthwise_kernel"))


@converts(SeparableConv1D, SeparableConv2D)
def convert_separable(call):
    layer = call.layer
    depthwise = call.weight(layer.depthwise_kernel)
    pointwise = to_onnx_kernel(call.weight(layer.pointwise_kernel))
    bias = None if layer.bias is None else call.weight(layer.bias)
    ones = (1,) * layer.rank

    def body(x):
        y = _conv(call, x, _depthwise_weight(depthwise), None, layer.kernel_size,
                  layer.strides, layer.dilation_rate, layer.padding, depthwise.shape[-2],
                  "depthwise_kernel")
        b = call.b
        inputs = [y, b.const(pointwise, f"{layer.name}/pointwise_kernel")]
        if bias is not None:
            inputs.append(b.const(bias, f"{layer.name}/bias"))
        return b.op("Conv", inputs, hint=layer.name, kernel_shape=list(ones))
    return _wrap(call, body)


@converts(Conv1DTranspose, Conv2DTranspose, Conv3DTranspose)
def convert_conv_transpose(call):
    layer, b = call.layer, call.b
    kernel = call.weight(layer.kernel)  # (k..., C_out, C_in)
    rank = kernel.ndim - 2
    weight = np.ascontiguousarray(np.transpose(kernel, [rank + 1, rank] + list(range(rank))))
    begins, ends, extra = [], [], []
    out_pads = layer.output_padding or (None,) * rank
    for k, s, d, o in zip(layer.kernel_size, layer.strides, layer.dilation_rate, out_pads):
        _, before = transpose_output_size_and_padding(None, k, s, d, layer.padding, o)
        eff = (k - 1) * d + 1
        length, _ = transpose_output_size_and_padding(1, k, s, d, layer.padding, o)
        # ONNX: out = (size - 1) * s + eff + output_padding - begin - end; match Keras's length.
        after = eff - before - length
        begins.append(before)
        ends.append(max(after, 0))
        extra.append(max(-after, 0))
    inputs_bias = None if layer.bias is None else call.weight(layer.bias)

    def body(x):
        inputs = [x, b.const(weight, f"{layer.name}/kernel")]
        if inputs_bias is not None:
            inputs.append(b.const(inputs_bias, f"{layer.name}/bias"))
        return b.op("ConvTranspose", inputs, hint=layer.name,
                    kernel_shape=list(layer.kernel_size), strides=list(layer.strides),
                    dilations=list(layer.dilation_rate), pads=begins + ends,
                    output_padding=extra if any(extra) else None)
    return _wrap(call, body)
