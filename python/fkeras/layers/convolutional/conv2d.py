"""Conv2D: 2-D convolution with optional bias and activation (one fused kernel call)."""

import numpy as np

from fkeras import activations, config, constraints, initializers, ops, regularizers
from fkeras.engine.input_spec import InputSpec
from fkeras.layers.layer import Layer
from fkeras.layers.weight_args import serialize_weight_args
from fkeras.ops.conv import normalize_padding, normalize_tuple, spatial_nhwc
from fkeras.ops.conv_utils import conv_output_size_and_padding


class Conv2D(Layer):
    """2-D convolution layer.

    The kernel has shape (kernel_h, kernel_w, in_channels / groups, filters) in both data
    formats, as in Keras, so weights transfer unchanged.

    Args:
        filters: positive int, the number of output channels.
        kernel_size: an int or a pair of ints.
        strides: an int or a pair; strides > 1 cannot be combined with dilation_rate > 1.
        padding: "valid" or "same" (TensorFlow's rule: extra padding at the bottom/right).
        data_format: "channels_last" (N, H, W, C), "channels_first" (N, C, H, W) or None (the
            configured image_data_format).
        dilation_rate: an int or a pair.
        groups: positive int dividing `filters` and the input channels.
        activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
        bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint: as Keras.

    Example:
    ```python
    y = Conv2D(8, 3, padding="same", activation="relu")(Input(shape=(32, 32, 3)))
    # y.shape == (None, 32, 32, 8)
    ```
    """

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, lora_rank=None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(filters, bool) or not isinstance(filters, (int, np.integer)) or \
                filters <= 0:
            raise ValueError("Invalid value for argument `filters`. Expected a strictly "
                             f"positive value. Received filters={filters}.")
        if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or groups <= 0:
            raise ValueError("The number of groups must be a positive integer. "
                             f"Received: groups={groups}.")
        if filters % groups:
            raise ValueError("The number of filters must be evenly divisible by the number of "
                             f"groups. Received: groups={groups}, filters={filters}.")
        self.filters, self.groups = int(filters), int(groups)
        self.kernel_size = normalize_tuple(kernel_size, 2, "kernel_size")
        self.strides = normalize_tuple(strides, 2, "strides")
        self.dilation_rate = normalize_tuple(dilation_rate, 2, "dilation_rate")
        for name in ("kernel_size", "strides", "dilation_rate"):
            if min(getattr(self, name)) <= 0:
                raise ValueError(f"The `{name}` argument must be a tuple of 2 integers. Received "
                                 f"{name}={getattr(self, name)}, including values that do not "
                                 "satisfy `value > 0`")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError("`strides > 1` not supported in conjunction with `dilation_rate > "
                             f"1`. Received: strides={self.strides} and "
                             f"dilation_rate={self.dilation_rate}")
        self.padding = normalize_padding(padding)
        self.data_format = config.data_format_or_default(data_format)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.input_spec = InputSpec(min_ndim=4, max_ndim=4)

    def _channel_axis(self):
        return 1 if self.data_format == "channels_first" else -1

    def build(self, input_shape):
        channels = input_shape[self._channel_axis()]
        if channels is None:
            raise ValueError(
                "The channel dimension of the inputs should be defined. The input_shape "
                f"received is {tuple(input_shape)}, where axis {self._channel_axis()} (0-based) "
                "is the channel dimension, which found to be `None`.")
        if channels % self.groups:
            raise ValueError(
                "The number of input channels must be evenly divisible by the number of groups. "
                f"Received groups={self.groups}, but the input has {channels} channels (full "
                f"input shape is {tuple(input_shape)}).")
        self.compute_output_shape(input_shape)  # raises for a zero or negative output size
        shape = self.kernel_size + (channels // self.groups, self.filters)
        self.kernel = self.add_weight(shape=shape, initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint, name="kernel")
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(shape=(self.filters,), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint, name="bias")
        self.input_spec = InputSpec(min_ndim=4, max_ndim=4,
                                    axes={self._channel_axis(): channels})
        self.built = True

    def call(self, inputs):
        code = activations.fused_code(self.activation)
        y = ops.conv2d(inputs, self.kernel, self.bias, self.strides, self.padding,
                       self.data_format, self.dilation_rate,
                       activation=0 if code is None else code,
                       alpha=activations.fused_alpha(self.activation))
        return y if code is not None else self.activation(y)

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        n, h, w, c = spatial_nhwc(input_shape, self.data_format)
        out = []
        for size, k, s, d in zip((h, w), self.kernel_size, self.strides, self.dilation_rate):
            if size is None:
                out.append(None)
                continue
            o, _ = conv_output_size_and_padding(size, k, s, d, self.padding)
            if o <= 0:
                raise ValueError(
                    "Computed output size would be zero or negative. Received `inputs shape="
                    f"{input_shape}`, `kernel shape={self.kernel_size + (c, self.filters)}`, "
                    f"`dilation_rate={np.array(self.dilation_rate)}`, "
                    f"`strides={self.strides}`, `padding={self.padding}`.")
            out.append(o)
        if self.data_format == "channels_first":
            return (n, self.filters) + tuple(out)
        return (n,) + tuple(out) + (self.filters,)

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
