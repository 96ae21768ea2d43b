"""keras.ops.depthwise_conv and keras.ops.separable_conv (1-D and 2-D), on the conv2d op.

A depthwise convolution with multiplier M is a grouped convolution with groups = C: Keras's
depthwise kernel (*kernel_size, C, M) reshaped to (*kernel_size, 1, C * M) is exactly the
grouped kernel (output channel c * M + m reads input channel c through kernel[..., c, m]),
so the fused conv2d op (bias and activation in its kernel) does all the work, forward and
backward; the reshape is an op, so the gradient reaches the kernel in Keras's shape.
A separable convolution is that depthwise convolution followed by a 1x1 convolution.
"""

from fkeras.ops import shape_utils as su
from fkeras.ops.conv import conv2d
from fkeras.ops.reshape_ops import reshape


def _grouped_kernel(kernel):
    shape = su.shape_of(kernel)
    return reshape(kernel, tuple(shape[:-2]) + (1, shape[-2] * shape[-1]))


def depthwise_conv2d(inputs, kernel, bias=None, strides=1, padding="valid", data_format=None,
                     dilation_rate=1, activation="linear", alpha=0.0):
    """act(depthwise_conv(inputs, kernel) + bias): the DepthwiseConv layers' op.

    Args:
        inputs: rank 3 or 4 in `data_format`.
        kernel: (*kernel_size, C, depth_multiplier).
        bias: (C * depth_multiplier,) or None.
    """
    return conv2d(inputs, _grouped_kernel(kernel), bias, strides, padding, data_format,
                  dilation_rate, activation, alpha)


def depthwise_conv(inputs, kernel, strides=1, padding="valid", data_format=None,
                   dilation_rate=1):
    """keras.ops.depthwise_conv: one filter bank per input channel (1-D or 2-D).

    Example:
    ```python
    y = fkeras.ops.depthwise_conv(np.ones((1, 5, 5, 3)), np.ones((3, 3, 3, 2)))
    # y.shape == (1, 3, 3, 6)
    ```
    """
    return depthwise_conv2d(inputs, kernel, None, strides, padding, data_format, dilation_rate)


def separable_conv(inputs, depthwise_kernel, pointwise_kernel, strides=1, padding="valid",
                   data_format=None, dilation_rate=1):
    """keras.ops.separable_conv: a depthwise convolution, then a 1x1 convolution.

    Args:
        depthwise_kernel: (*kernel_size, C, depth_multiplier).
        pointwise_kernel: (*(1,) * rank, C * depth_multiplier, filters).
    """
    y = depthwise_conv(inputs, depthwise_kernel, strides, padding, data_format, dilation_rate)
    return conv2d(y, pointwise_kernel, None, 1, "valid", data_format, 1)
