"""Conv1DTranspose, Conv2DTranspose, Conv3DTranspose (Keras's signatures, argument orders
included: Conv3DTranspose takes data_format before output_padding)."""

from fkeras.layers.convolutional.base_conv_transpose import BaseConvTranspose

_ARGS_DOC = """
    Args:
        filters: positive int, the number of output channels.
        kernel_size, strides, dilation_rate: an int or one int per spatial dimension.
        padding: "valid" or "same"; with output_padding None the output length is
            in * stride + max(k_eff - stride, 0) ("valid") or in * stride ("same"), where
            k_eff = (kernel_size - 1) * dilation_rate + 1.
        output_padding: None, an int or one int per spatial dimension, each < its stride:
            the output length becomes (in - 1) * stride + k_eff - 2 * pad + output_padding
            (pad = k_eff // 2 for "same", 0 for "valid"), as Keras.
        data_format: "channels_last", "channels_first" or None (the configured default).
        activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
        bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint: as Keras.
"""


class Conv1DTranspose(BaseConvTranspose):
    __doc__ = """1-D transposed convolution; kernel (kernel_size, filters, in_channels).
    """ + _ARGS_DOC + """
    Example:
    ```python
    y = Conv1DTranspose(4, 3, strides=2, padding="same")(Input(shape=(10, 8)))  # (None, 20, 4)
    ```
    """

    rank = 1  # the base class's __init__ has Keras's 1-D signature and defaults


class Conv2DTranspose(BaseConvTranspose):
    __doc__ = """2-D transposed convolution; kernel (kh, kw, filters, in_channels).
    """ + _ARGS_DOC + """
    Example:
    ```python
    y = Conv2DTranspose(4, 3, strides=2, padding="same")(Input(shape=(8, 8, 16)))
    # y.shape == (None, 16, 16, 4)
    ```
    """

    rank = 2

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 output_padding=None, data_format=None, dilation_rate=(1, 1), activation=None,
                 use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, output_padding, data_format,
                         dilation_rate, activation, use_bias, kernel_initializer,
                         bias_initializer, kernel_regularizer, bias_regularizer,
                         activity_regularizer, kernel_constraint, bias_constraint, **kwargs)


class Conv3DTranspose(BaseConvTranspose):
    __doc__ = """3-D transposed convolution; kernel (kd, kh, kw, filters, in_channels).
    """ + _ARGS_DOC + """
    Example:
    ```python
    y = Conv3DTranspose(4, 2, strides=2)(Input(shape=(4, 4, 4, 8)))   # (None, 8, 8, 8, 4)
    ```
    """

    rank = 3

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                 data_format=None, output_padding=None, dilation_rate=(1, 1, 1),
                 activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 **kwargs):
        super().__init__(filters, kernel_size, strides, padding, output_padding, data_format,
                         dilation_rate, activation, use_bias, kernel_initializer,
                         bias_initializer, kernel_regularizer, bias_regularizer,
                         activity_regularizer, kernel_constraint, bias_constraint, **kwargs)
