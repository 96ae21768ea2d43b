"""SeparableConv1D and SeparableConv2D."""

from fkeras.layers.convolutional.base_depthwise_conv import BaseSeparableConv

_DOC = """{rank}-D separable convolution: a depthwise convolution, then a pointwise (1x1) one.

    Weights: depthwise_kernel ({kernel}, C, depth_multiplier), pointwise_kernel
    ({ones}, C * depth_multiplier, filters), bias (filters,).

    Args:
        filters: positive int.
        kernel_size, strides, dilation_rate: an int or {tuple}.
        padding: "valid" or "same".
        data_format: "channels_last", "channels_first" or None.
        depth_multiplier: positive int.
        activation, use_bias, depthwise_/pointwise_/bias_ initializer, regularizer and
        constraint, activity_regularizer: as Keras.

    Example:
    ```python
    {example}
    ```
    """


class SeparableConv1D(BaseSeparableConv):
    __doc__ = _DOC.format(rank=1, kernel="kernel_size", ones="1", tuple="a 1-tuple", example=(
        "y = SeparableConv1D(8, 3)(Input(shape=(10, 4)))   # (None, 8, 8)"))

    rank = 1  # the base class's __init__ has Keras's 1-D signature and defaults


class SeparableConv2D(BaseSeparableConv):
    __doc__ = _DOC.format(rank=2, kernel="kh, kw", ones="1, 1", tuple="a pair", example=(
        'y = SeparableConv2D(32, 3, padding="same")(Input(shape=(16, 16, 8)))  '
        "# (None, 16, 16, 32)"))

    rank = 2

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), depth_multiplier=1, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", pointwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None,
                 **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate,
                         depth_multiplier, activation, use_bias, depthwise_initializer,
                         pointwise_initializer, bias_initializer, depthwise_regularizer,
                         pointwise_regularizer, bias_regularizer, activity_regularizer,
                         depthwise_constraint, pointwise_constraint, bias_constraint, **kwargs)
