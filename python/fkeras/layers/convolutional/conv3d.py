"""Conv3D: 3-D convolution (a sum over depth taps of 2-D convolution kernel calls)."""

from fkeras.layers.convolutional.base_conv import BaseConv


class Conv3D(BaseConv):
    """3-D convolution layer.

    The kernel has shape (kd, kh, kw, in_channels / groups, filters) in both data formats, as
    in Keras.

    Args:
        filters: positive int, the number of output channels.
        kernel_size, strides, dilation_rate: an int or a 3-tuple (strides > 1 cannot be
            combined with dilation_rate > 1).
        padding: "valid" or "same" (TensorFlow's rule: the extra padding goes at the end).
        data_format: "channels_last" (N, D, H, W, C), "channels_first" (N, C, D, H, W) or None.
        groups: positive int dividing `filters` and the input channels.
        activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
        bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint: as Keras.

    Example:
    ```python
    y = Conv3D(8, 3, padding="same")(Input(shape=(8, 16, 16, 1)))   # (None, 8, 16, 16, 8)
    ```
    """

    rank = 3

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                 data_format=None, dilation_rate=(1, 1, 1), groups=1, activation=None,
                 use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate,
                         groups, activation, use_bias, kernel_initializer, bias_initializer,
                         kernel_regularizer, bias_regularizer, activity_regularizer,
                         kernel_constraint, bias_constraint, **kwargs)
