"""Conv2D followed by a non-overlapping 'valid' MaxPooling2D as one op (internal: the training
plan's `fuse_conv_pool`, trainers/plan_fusion.py, applies it).

Forward: `conv2d_forward_maxpool2d` with indices: the convolution (bias and a fused activation
in its store) is pooled row by row while in cache, so the convolution's output (N, P, Q, K) is
never written; the pooled y (N, P // ph, Q // pw, K) and each maximum's flat offset into that
output are. With no tape recording (inference) the indices are skipped.
Backward: `conv2d_maxpool2d_backward` writes dz (the convolution output's shape: the pooled
cotangent times act'(y) at the indices, zeros elsewhere) and the bias gradient in one pass,
then `conv2d_backward_input` / `conv2d_backward_weight` run on dz as the Conv2D op's do.
relu(max(z)) == max(relu(z)) and the first-maximum tie rule make every result bit-identical to
the unfused Conv2D -> MaxPooling2D pair. channels_last, activations linear / relu / leaky_relu
(slope >= 0) only; a device without the two kernels runs the pair's own ops' kernels.
"""

import numpy as np

from fkeras.backend import codes
from fkeras.engine import tape as _tape
from fkeras.ops import shape_utils as su
from fkeras.ops.conv import FUSED, normalize_tuple, to_nhwc
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import Op, apply

KERNELS = ("conv2d_forward_maxpool2d", "conv2d_maxpool2d_backward")


def _conv_attrs(strides, padding, dilation_rate, activation, alpha):
    return dict(strides=strides, padding=padding, dilation_rate=dilation_rate,
                data_format="channels_last", activation=activation, alpha=alpha)


def _pool_attrs(pool_size):
    return dict(pool_size=pool_size, strides=pool_size, padding="valid",
                data_format="channels_last")


class Conv2DMaxPool2D(Op):
    """max_pool(act(conv(x, kernel) + bias), pool_size, strides=pool_size, 'valid'); NHWC."""

    name = "conv2d_maxpool2d"
    device_native = True

    def output_spec(self, x, kernel, bias=None, strides=(1, 1), padding="valid",
                    dilation_rate=(1, 1), activation=0, alpha=0.0, pool_size=(2, 2)):
        n, p, q, k = _R["conv2d"].output_spec(
            x, kernel, bias, **_conv_attrs(strides, padding, dilation_rate, activation, alpha))
        return (n, *_pooled((n, p, q, k), pool_size), k)

    def forward(self, dev, x, kernel, bias=None, strides=(1, 1), padding="valid",
                dilation_rate=(1, 1), activation=0, alpha=0.0, pool_size=(2, 2)):
        conv_attrs = _conv_attrs(strides, padding, dilation_rate, activation, alpha)
        if not all(k in dev.kernels for k in KERNELS):  # the pair's ops, same results
            z, conv_saved = _R["conv2d"].forward(dev, x, kernel, bias, **conv_attrs)
            y, pool_saved = _R["max_pool2d"].forward(dev, z, **_pool_attrs(pool_size))
            return y, ("pair", conv_saved, pool_saved)
        conv = _R["conv2d"]
        g = conv._geometry(x.shape, kernel.shape, strides, padding, dilation_rate,
                           "channels_last")
        xs = to_nhwc(x, "channels_last")
        w = kernel.reshape(g["R"], g["S"], -1, g["K"])
        ph, pw = pool_size
        y = dev.empty((g["N"], *_pooled((g["N"], g["P"], g["Q"], g["K"]), pool_size), g["K"]))
        no_grad = dev.is_host and _tape.current_tape() is None
        idx = None if no_grad else dev.empty(y.shape, np.int64)
        dev.kernels["conv2d_forward_maxpool2d"](
            y, xs, w, bias, *conv._sizes(g, strides, dilation_rate), activation, alpha, ph, pw,
            idx)
        return y, ("fused", xs, w, y, idx, bias is not None, g)

    def backward(self, dev, saved, grad, needs, strides=(1, 1), padding="valid",
                 dilation_rate=(1, 1), activation=0, alpha=0.0, pool_size=(2, 2)):
        conv_attrs = _conv_attrs(strides, padding, dilation_rate, activation, alpha)
        if saved[0] == "pair":
            _, conv_saved, pool_saved = saved
            (gz,) = _R["max_pool2d"].backward(dev, pool_saved, grad, [True],
                                              **_pool_attrs(pool_size))
            return _R["conv2d"].backward(dev, conv_saved, gz, needs, **conv_attrs)
        _, xs, w, y, idx, has_bias, g = saved
        N, P, Q, K = g["N"], g["P"], g["Q"], g["K"]
        dz = dev.empty((N, P, Q, K)) if needs[0] or needs[1] else None
        db = dev.empty((K,)) if has_bias and needs[2] else None
        dev.kernels["conv2d_maxpool2d_backward"](dz, db, dev.contiguous(grad), y, idx, N, P, Q,
                                                 K, pool_size[0], pool_size[1], activation,
                                                 alpha)
        return (*_R["conv2d"].products_backward(dev, dz, xs, w, g, needs, strides,
                                                dilation_rate), db)


def _pooled(conv_shape, pool_size):
    """(P // ph, Q // pw) of the convolution's output (N, P, Q, K); P, Q may be None."""
    pooled = [None if d is None else d // s for d, s in zip(conv_shape[1:3], pool_size)]
    if 0 in pooled:
        raise ValueError("Computed output size would be zero or negative. Received: "
                         f"`inputs.shape={tuple(conv_shape)}` and `pool_size={pool_size}`.")
    return pooled


def fusable_activation(code, alpha):
    """Whether conv2d_maxpool2d takes this activation (code, alpha) in its kernels."""
    return code in FUSED and float(alpha) >= 0.0


def conv2d_maxpool2d(inputs, kernel, bias=None, strides=1, padding="valid", dilation_rate=1,
                     activation=codes.RELU, alpha=0.0, pool_size=2):
    """max_pool(conv2d(...), pool_size, strides=pool_size, padding='valid') as one op.

    Internal (no Keras name): the training plan's Conv2D + MaxPooling2D fusion.

    Args:
        inputs: (N, H, W, C), channels_last.
        kernel: (kh, kw, C / groups, filters); bias: (filters,) or None.
        strides, dilation_rate: the convolution's, an int or a pair.
        padding: the convolution's, "valid" or "same".
        activation: a kernel code: linear, relu or leaky_relu (with `alpha` >= 0).
        pool_size: the pooling window and stride, an int or a pair.

    Returns:
        (N, P // pool_h, Q // pool_w, filters) for the convolution's output size (P, Q).
    """
    code = int(activation)
    if not fusable_activation(code, alpha):
        raise ValueError("`conv2d_maxpool2d`: activation must be linear, relu or leaky_relu "
                         f"with alpha >= 0, received code {code}, alpha={alpha}.")
    if len(su.shape_of(inputs)) != 4:
        raise ValueError("`conv2d_maxpool2d` takes a rank-4 (N, H, W, C) input, received "
                         f"shape {su.shape_of(inputs)}.")
    return apply(_R["conv2d_maxpool2d"], inputs, kernel, bias,
                 strides=normalize_tuple(strides, 2, "strides"),
                 padding=str(padding).lower(),
                 dilation_rate=normalize_tuple(dilation_rate, 2, "dilation_rate"),
                 activation=code, alpha=float(alpha),
                 pool_size=normalize_tuple(pool_size, 2, "pool_size"))
