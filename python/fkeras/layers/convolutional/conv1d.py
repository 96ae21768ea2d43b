"""Conv1D: 1-D convolution (temporal), with Keras's 'causal' padding."""

from fkeras.layers.convolutional.base_conv import BaseConv


class Conv1D(BaseConv):
    """1-D convolution layer.

    Runs as a 2-D convolution with a height of 1. The kernel has shape
    (kernel_size, in_channels / groups, filters), as in Keras.

    Args:
        filters: positive int, the number of output channels.
        kernel_size: an int or a 1-tuple.
        strides: an int or a 1-tuple; strides > 1 cannot be combined with dilation_rate > 1.
        padding: "valid", "same" or "causal" (left padding by dilation_rate * (kernel_size - 1),
            so output t never reads input t + 1 or later).
        data_format: "channels_last" (N, T, C), "channels_first" (N, C, T) or None.
        dilation_rate: an int or a 1-tuple.
        groups: positive int dividing `filters` and the input channels.
        activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
        bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint: as Keras.

    Example:
    ```python
    y = Conv1D(8, 3, padding="causal")(Input(shape=(20, 4)))   # y.shape == (None, 20, 8)
    ```
    """

    rank = 1
    allow_causal = True

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate,
                         groups, activation, use_bias, kernel_initializer, bias_initializer,
                         kernel_regularizer, bias_regularizer, activity_regularizer,
                         kernel_constraint, bias_constraint, **kwargs)
