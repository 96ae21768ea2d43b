"""BaseConvTranspose: the body of Conv1DTranspose, Conv2DTranspose and Conv3DTranspose."""

from fkeras import activations, config
from fkeras.engine.input_spec import InputSpec
from fkeras.layers.convolutional.base_conv import (
    check_strides_dilation,
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
from fkeras.layers.reshaping.spatial_args import standardize_tuple
from fkeras.ops.conv_nd import conv_transpose, join_shape, split_shape
from fkeras.ops.conv_nd import transpose_output_size_and_padding


class BaseConvTranspose(Layer):
    """N-D transposed convolution (N = `rank`): the gradient of a convolution with respect to
    its input, used as a learned upsampling. Kernel (*kernel_size, filters, in_channels)."""

    _fk_float_inputs = True

    rank = None

    def __init__(self, filters, kernel_size, strides=1, padding="valid", output_padding=None,
                 data_format=None, dilation_rate=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(**kwargs)
        rank = self.rank
        self.filters = positive_int(filters, "filters")
        self.kernel_size = positive_tuple(kernel_size, rank, "kernel_size")
        self.strides = positive_tuple(strides, rank, "strides")
        self.dilation_rate = positive_tuple(dilation_rate, rank, "dilation_rate")
        self.padding = standardize_padding(padding)
        self.output_padding = None
        if output_padding is not None:
            self.output_padding = standardize_tuple(output_padding, rank, "output_padding",
                                                    allow_zero=True)
        self.data_format = config.data_format_or_default(data_format)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        store_weight_args(self, ("kernel", "bias"), kernel_initializer=kernel_initializer,
                          bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                          bias_regularizer=bias_regularizer,
                          activity_regularizer=activity_regularizer,
                          kernel_constraint=kernel_constraint, bias_constraint=bias_constraint)
        if self.output_padding is not None:
            for i, (op, s) in enumerate(zip(self.output_padding, self.strides)):
                if op >= s:
                    raise ValueError(
                        "`output_padding` must be strictly less than `strides` for all "
                        f"dimensions. At dimension {i}, `output_padding` is {op} but "
                        f"`strides` is {s}. Received: output_padding={self.output_padding}, "
                        f"strides={self.strides}")
        check_strides_dilation(self.strides, self.dilation_rate)
        self.input_spec = InputSpec(min_ndim=rank + 2, max_ndim=rank + 2)

    def build(self, input_shape):
        axis, channels = input_channels(self, input_shape)
        self.compute_output_shape(input_shape)
        self.kernel = add_arg_weight(self, "kernel", self.kernel_size + (self.filters, channels))
        self.bias = add_arg_weight(self, "bias", (self.filters,)) if self.use_bias else None
        self.input_spec = InputSpec(min_ndim=self.rank + 2, max_ndim=self.rank + 2,
                                    axes={axis: channels})
        self.built = True

    def call(self, inputs):
        y = conv_transpose(inputs, self.kernel, self.strides, self.padding, self.output_padding,
                           self.data_format, self.dilation_rate, bias=self.bias)
        return self.activation(y)

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        n, spatial, _ = split_shape(input_shape, self.data_format)
        ops_ = self.output_padding or (None,) * self.rank
        out = []
        for size, k, s, d, o in zip(spatial, self.kernel_size, self.strides,
                                    self.dilation_rate, ops_):
            length = transpose_output_size_and_padding(size, k, s, d, self.padding, o)[0]
            if length is not None and length <= 0:
                raise ValueError(
                    "Computed output size would be zero or negative. Received `inputs shape="
                    f"{input_shape}`, `kernel_size={self.kernel_size}`, "
                    f"`strides={self.strides}`, `padding={self.padding}`.")
            out.append(length)
        return join_shape(n, out, self.filters, self.data_format)

    def get_config(self):
        config_ = super().get_config()
        config_.update({
            "filters": self.filters,
            "kernel_size": self.kernel_size,
            "strides": self.strides,
            "padding": self.padding,
            "output_padding": self.output_padding,
            "data_format": self.data_format,
            "dilation_rate": self.dilation_rate,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            **serialize_weight_args(self),
        })
        return config_
