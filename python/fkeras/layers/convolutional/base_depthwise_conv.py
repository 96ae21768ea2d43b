"""BaseDepthwiseConv and BaseSeparableConv: the bodies of DepthwiseConv1D/2D and
SeparableConv1D/2D (one filter bank per input channel, as a grouped convolution with
groups = in_channels; the separable layers follow it with a 1x1 convolution)."""

from fkeras import activations, config, ops
from fkeras.engine.input_spec import InputSpec
from fkeras.layers.convolutional.base_conv import (
    check_strides_dilation,
    conv_output_shape,
    fused_conv,
    input_channels,
    positive_int,
    positive_tuple,
    standardize_padding,
)
from fkeras.layers.layer import Layer
from fkeras.layers.weight_args import (
    add_arg_weight,
    serialize_weight_args,
    store_weight_args,
)
from fkeras.ops.depthwise import depthwise_conv, depthwise_conv2d


class _DepthwiseBase(Layer):
    _fk_float_inputs = True

    rank = None
    weight_names = ()

    def _init_common(self, kernel_size, strides, padding, depth_multiplier, data_format,
                     dilation_rate, activation, use_bias, bias_initializer, bias_regularizer,
                     activity_regularizer, bias_constraint, **weight_args):
        rank = self.rank
        self.depth_multiplier = positive_int(depth_multiplier, "depth_multiplier")
        self.kernel_size = positive_tuple(kernel_size, rank, "kernel_size")
        self.strides = positive_tuple(strides, rank, "strides")
        self.dilation_rate = positive_tuple(dilation_rate, rank, "dilation_rate")
        check_strides_dilation(self.strides, self.dilation_rate)
        self.padding = standardize_padding(padding)
        self.data_format = config.data_format_or_default(data_format)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        store_weight_args(self, self.weight_names + ("bias",), bias_initializer=bias_initializer,
                          bias_regularizer=bias_regularizer, bias_constraint=bias_constraint,
                          activity_regularizer=activity_regularizer, **weight_args)
        self.input_spec = InputSpec(min_ndim=rank + 2, max_ndim=rank + 2)

    def _finish_build(self, axis, channels, bias_size):
        self.bias = add_arg_weight(self, "bias", (bias_size,)) if self.use_bias else None
        self.input_spec = InputSpec(min_ndim=self.rank + 2, max_ndim=self.rank + 2,
                                    axes={axis: channels})
        self.built = True

    def _config(self, extra):
        config_ = super().get_config()
        config_.update({"depth_multiplier": self.depth_multiplier, **extra,
                        "kernel_size": self.kernel_size, "strides": self.strides,
                        "padding": self.padding, "data_format": self.data_format,
                        "dilation_rate": self.dilation_rate,
                        "activation": activations.serialize(self.activation),
                        "use_bias": self.use_bias,
                        **serialize_weight_args(self, self.weight_names + ("bias",))})
        return config_


class BaseDepthwiseConv(_DepthwiseBase):
    """Depthwise convolution: kernel (*kernel_size, C, depth_multiplier), bias (C * M,)."""

    weight_names = ("depthwise",)

    def __init__(self, kernel_size, strides=1, padding="valid", depth_multiplier=1,
                 data_format=None, dilation_rate=1, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", bias_initializer="zeros",
                 depthwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(**kwargs)
        self._init_common(kernel_size, strides, padding, depth_multiplier, data_format,
                          dilation_rate, activation, use_bias, bias_initializer,
                          bias_regularizer, activity_regularizer, bias_constraint,
                          depthwise_initializer=depthwise_initializer,
                          depthwise_regularizer=depthwise_regularizer,
                          depthwise_constraint=depthwise_constraint)

    def build(self, input_shape):
        axis, channels = input_channels(self, input_shape)
        self.compute_output_shape(input_shape)
        shape = self.kernel_size + (channels, self.depth_multiplier)
        self.kernel = add_arg_weight(self, "depthwise", shape, "kernel")
        self._finish_build(axis, channels, channels * self.depth_multiplier)

    def call(self, inputs):
        return fused_conv(self, depthwise_conv2d, inputs, self.kernel)

    def compute_output_shape(self, input_shape):
        axis = 1 if self.data_format == "channels_first" else -1
        c = input_shape[axis]
        return conv_output_shape(self, input_shape, None if c is None else
                                 c * self.depth_multiplier,
                                 self.kernel_size + (c, self.depth_multiplier))

    def get_config(self):
        return self._config({})


class BaseSeparableConv(_DepthwiseBase):
    """Depthwise convolution, then a 1x1 convolution to `filters` channels with bias."""

    weight_names = ("depthwise", "pointwise")

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, depth_multiplier=1, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", pointwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.filters = positive_int(filters, "filters")
        self._init_common(kernel_size, strides, padding, depth_multiplier, data_format,
                          dilation_rate, activation, use_bias, bias_initializer,
                          bias_regularizer, activity_regularizer, bias_constraint,
                          depthwise_initializer=depthwise_initializer,
                          depthwise_regularizer=depthwise_regularizer,
                          depthwise_constraint=depthwise_constraint,
                          pointwise_initializer=pointwise_initializer,
                          pointwise_regularizer=pointwise_regularizer,
                          pointwise_constraint=pointwise_constraint)

    def build(self, input_shape):
        axis, channels = input_channels(self, input_shape)
        self.compute_output_shape(input_shape)
        self.depthwise_kernel = add_arg_weight(
            self, "depthwise", self.kernel_size + (channels, self.depth_multiplier),
            "depthwise_kernel")
        self.pointwise_kernel = add_arg_weight(
            self, "pointwise", (1,) * self.rank + (channels * self.depth_multiplier,
                                                   self.filters), "pointwise_kernel")
        self._finish_build(axis, channels, self.filters)

    def call(self, inputs):
        y = depthwise_conv(inputs, self.depthwise_kernel, self.strides, self.padding,
                           self.data_format, self.dilation_rate)
        code, alpha = activations.fused(self.activation)
        y = ops.conv2d(y, self.pointwise_kernel, self.bias, 1, "valid", self.data_format, 1,
                       activation=0 if code is None else code,
                       alpha=alpha)
        return y if code is not None else self.activation(y)

    def compute_output_shape(self, input_shape):
        axis = 1 if self.data_format == "channels_first" else -1
        c = input_shape[axis]
        return conv_output_shape(self, input_shape, self.filters,
                                 self.kernel_size + (c, self.depth_multiplier))

    def get_config(self):
        return self._config({"filters": self.filters})
