"""BaseConv: the body of Conv1D, Conv2D and Conv3D, and argument checks shared by every
convolution layer (Keras 3's texts)."""

import numpy as np

from fkeras import activations, config, ops
from fkeras.engine.input_spec import InputSpec
from fkeras.engine.tensor import run_user
from fkeras.layers.layer import Layer
from fkeras.layers.reshaping.spatial_args import standardize_tuple
from fkeras.layers.weight_args import (
    add_arg_weight,
    serialize_weight_args,
    store_weight_args,
)
from fkeras.ops.conv_nd import conv3d, join_shape, split_shape
from fkeras.ops.conv_utils import conv_output_size_and_padding
from fkeras.ops.padding import pad


def positive_int(value, what):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"Invalid value for argument `{what}`. Expected a strictly positive "
                         f"value. Received {what}={value}.")
    return int(value)


def positive_tuple(value, rank, name):
    return standardize_tuple(value, rank, name)


def standardize_padding(padding, allow_causal=False):
    mode = str(padding).lower()
    allowed = ("valid", "same", "causal") if allow_causal else ("valid", "same")
    if mode not in allowed:
        names = ", ".join(repr(a) for a in allowed)
        raise ValueError("The `padding` argument must be a list/tuple or one of "
                         f"{{{names}}}. Received: {padding}")
    return mode


def check_strides_dilation(strides, dilation_rate):
    if max(strides) > 1 and max(dilation_rate) > 1:
        raise ValueError("`strides > 1` not supported in conjunction with `dilation_rate > "
                         f"1`. Received: strides={strides} and dilation_rate={dilation_rate}")


def input_channels(layer, input_shape):
    """The channel count of `input_shape` (Keras 2's error when it is unknown)."""
    axis = 1 if layer.data_format == "channels_first" else -1
    channels = input_shape[axis]
    if channels is None:
        raise ValueError(
            "The channel dimension of the inputs should be defined. The input_shape received "
            f"is {tuple(input_shape)}, where axis {axis} (0-based) is the channel dimension, "
            "which found to be `None`.")
    return axis, channels


def conv_output_shape(layer, input_shape, out_channels, kernel_shape):
    """Output shape of a (depthwise) convolution layer; raises for a non-positive size."""
    input_shape = tuple(input_shape)
    n, spatial, _ = split_shape(input_shape, layer.data_format)
    out = []
    for size, k, s, d in zip(spatial, layer.kernel_size, layer.strides, layer.dilation_rate):
        if size is None:
            out.append(None)
            continue
        if layer.padding == "causal":
            o = -(-size // s)
        else:
            o = conv_output_size_and_padding(size, k, s, d, layer.padding)[0]
        if o <= 0:
            raise ValueError(
                "Computed output size would be zero or negative. Received `inputs shape="
                f"{input_shape}`, `kernel shape={kernel_shape}`, "
                f"`dilation_rate={np.array(layer.dilation_rate)}`, "
                f"`strides={layer.strides}`, `padding={layer.padding}`.")
        out.append(o)
    return join_shape(n, out, out_channels, layer.data_format)


def causal_pad(layer, inputs):
    """Left-pads the time axis of a rank-3 input by the dilated kernel extent minus one."""
    left = layer.dilation_rate[0] * (layer.kernel_size[0] - 1)
    widths = [(0, 0)] * 3
    widths[2 if layer.data_format == "channels_first" else 1] = (left, 0)
    return pad(inputs, widths)


def fused_conv(layer, conv_fn, inputs, *weights):
    """act(conv_fn(...) + bias) with the activation fused into the kernel where it can be."""
    code, alpha = activations.fused(layer.activation)
    padding = layer.padding
    if padding == "causal":
        inputs, padding = causal_pad(layer, inputs), "valid"
    y = conv_fn(inputs, *weights, layer.bias, layer.strides, padding, layer.data_format,
                layer.dilation_rate, activation=0 if code is None else code,
                alpha=alpha)
    return y if code is not None else layer.activation(y)


class BaseConv(Layer):
    """N-D convolution layer (N = `rank`); see Conv1D, Conv2D, Conv3D."""

    _fk_float_inputs = True

    rank = None
    allow_causal = False

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, lora_rank=None, **kwargs):
        super().__init__(**kwargs)
        rank = self.rank
        self.filters = positive_int(filters, "filters")
        if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or groups <= 0:
            raise ValueError("The number of groups must be a positive integer. "
                             f"Received: groups={groups}.")
        if filters % groups:
            raise ValueError("The number of filters must be evenly divisible by the number of "
                             f"groups. Received: groups={groups}, filters={filters}.")
        self.groups = int(groups)
        self.kernel_size = positive_tuple(kernel_size, rank, "kernel_size")
        self.strides = positive_tuple(strides, rank, "strides")
        self.dilation_rate = positive_tuple(dilation_rate, rank, "dilation_rate")
        check_strides_dilation(self.strides, self.dilation_rate)
        self.padding = standardize_padding(padding, self.allow_causal)
        self.data_format = config.data_format_or_default(data_format)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        store_weight_args(self, ("kernel", "bias"), kernel_initializer=kernel_initializer,
                          bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                          bias_regularizer=bias_regularizer,
                          activity_regularizer=activity_regularizer,
                          kernel_constraint=kernel_constraint, bias_constraint=bias_constraint)
        self.input_spec = InputSpec(min_ndim=rank + 2, max_ndim=rank + 2)

    def build(self, input_shape):
        axis, channels = input_channels(self, input_shape)
        if channels % self.groups:
            raise ValueError(
                "The number of input channels must be evenly divisible by the number of groups. "
                f"Received groups={self.groups}, but the input has {channels} channels (full "
                f"input shape is {tuple(input_shape)}).")
        self.compute_output_shape(input_shape)  # raises for a zero or negative output size
        shape = self.kernel_size + (channels // self.groups, self.filters)
        self.kernel = add_arg_weight(self, "kernel", shape)
        self.bias = add_arg_weight(self, "bias", (self.filters,)) if self.use_bias else None
        self.input_spec = InputSpec(min_ndim=self.rank + 2, max_ndim=self.rank + 2,
                                    axes={axis: channels})
        self.built = True

    def convolution_op(self, inputs, kernel):
        """The convolution alone (no bias, no activation) of `inputs` with `kernel`.

        Keras's hook for custom convolutions: a Conv2D or Conv3D subclass that overrides it
        gets `call` = `convolution_op(inputs, self.kernel)` + bias, then the activation (the
        override runs as user code, so its gradients reach the kernel). As in Keras 3,
        Conv1D's `call` does not use it.

        Args:
            inputs: the layer's input tensor.
            kernel: a tensor of the kernel's shape.

        Returns:
            `ops.conv` of the two with the layer's strides, padding, dilation and data format.
        """
        return ops.conv(inputs, kernel, strides=list(self.strides), padding=self.padding,
                        dilation_rate=self.dilation_rate, data_format=self.data_format)

    def call(self, inputs):
        if self.rank > 1 and type(self).convolution_op is not BaseConv.convolution_op:
            return self._call_custom_convolution_op(inputs)
        if self.rank < 3:
            return fused_conv(self, ops.conv2d, inputs, self.kernel)
        y = conv3d(inputs, self.kernel, self.bias, self.strides, self.padding, self.data_format,
                   self.dilation_rate)
        return self.activation(y)

    def _call_custom_convolution_op(self, inputs):
        y = run_user(self.convolution_op, inputs, self.kernel)
        if self.use_bias:
            shape = ((1,) * (self.rank + 1) + (self.filters,)
                     if self.data_format == "channels_last" else (1, self.filters) + (1,) * self.rank)
            y = ops.add(y, ops.reshape(self.bias, shape))
        return self.activation(y)

    def compute_output_shape(self, input_shape):
        axis = 1 if self.data_format == "channels_first" else -1
        kernel_shape = self.kernel_size + (input_shape[axis], self.filters)
        return conv_output_shape(self, input_shape, self.filters, kernel_shape)

    def get_config(self):
        config_ = super().get_config()
        config_.update({
            "filters": self.filters,
            "kernel_size": self.kernel_size,
            "strides": self.strides,
            "padding": self.padding,
            "data_format": self.data_format,
            "dilation_rate": self.dilation_rate,
            "groups": self.groups,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            **serialize_weight_args(self),
        })
        return config_
