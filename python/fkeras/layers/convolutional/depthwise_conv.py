"""DepthwiseConv1D and DepthwiseConv2D."""

from fkeras.layers.convolutional.base_depthwise_conv import BaseDepthwiseConv

_DOC = """{rank}-D depthwise convolution: `depth_multiplier` filters per input channel.

    Kernel ({kernel}, C, depth_multiplier); output channel c * depth_multiplier + m.

    Args:
        kernel_size, strides, dilation_rate: an int or {tuple}.
        padding: "valid" or "same".
        depth_multiplier: positive int.
        data_format: "channels_last", "channels_first" or None.
        activation, use_bias, depthwise_initializer, bias_initializer, depthwise_regularizer,
        bias_regularizer, activity_regularizer, depthwise_constraint, bias_constraint: as Keras.

    Example:
    ```python
    {example}
    ```
    """


class DepthwiseConv1D(BaseDepthwiseConv):
    __doc__ = _DOC.format(rank=1, kernel="kernel_size", tuple="a 1-tuple", example=(
        "y = DepthwiseConv1D(3, depth_multiplier=2)(Input(shape=(10, 4)))   # (None, 8, 8)"))

    rank = 1  # the base class's __init__ has Keras's 1-D signature and defaults


class DepthwiseConv2D(BaseDepthwiseConv):
    __doc__ = _DOC.format(rank=2, kernel="kh, kw", tuple="a pair", example=(
        'y = DepthwiseConv2D(3, padding="same")(Input(shape=(8, 8, 16)))   # (None, 8, 8, 16)'))

    rank = 2

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1,
                 data_format=None, dilation_rate=(1, 1), activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", bias_initializer="zeros",
                 depthwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(kernel_size, strides, padding, depth_multiplier, data_format,
                         dilation_rate, activation, use_bias, depthwise_initializer,
                         bias_initializer, depthwise_regularizer, bias_regularizer,
                         activity_regularizer, depthwise_constraint, bias_constraint, **kwargs)
