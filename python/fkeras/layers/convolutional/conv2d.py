"""Conv2D: 2-D convolution with optional bias and activation (one fused kernel call)."""

from fkeras.layers.convolutional.base_conv import BaseConv


class Conv2D(BaseConv):
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

    rank = 2

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, lora_rank=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate,
                         groups, activation, use_bias, kernel_initializer, bias_initializer,
                         kernel_regularizer, bias_regularizer, activity_regularizer,
                         kernel_constraint, bias_constraint, **kwargs)
