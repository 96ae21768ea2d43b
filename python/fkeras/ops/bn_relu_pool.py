"""BatchNormalization (training statistics) + ReLU + a non-overlapping 'valid' MaxPooling2D as
one op (internal: the training plan's `fuse_bn_relu_pool`, trainers/plan_fusion.py, applies it).

Forward: `batchnorm_relu_maxpool_forward_train`: the statistics pass of `batch_norm_relu_train`,
then its write pass with the max pool in the store: only the pooled values and each maximum's
position in its window (int8: an eighth of max_pool2d's int64 flat offsets, and the same
maximum) are written, never the (N, H, W, C) activation.
Backward: `batchnorm_relu_maxpool_backward`: `batch_norm_relu_train`'s two passes over x, their
cotangent (the pool's scatter of the pooled one) built tile by tile in cache instead of read
from a full-size array. Every result is bit-identical to the unfused chain
batch_norm_relu_train -> max_pool2d. channels_last (N, H, W, C) only, the statistics over
N, H, W; a device without the two kernels, or a window of more than 128 elements, runs the
chain's own ops.
"""

import numpy as np

from fkeras.engine.tape import zero_filled
from fkeras.ops import shape_utils as su
from fkeras.ops.conv import normalize_tuple
from fkeras.ops.normalization import _statistics_gradient, _View
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import Op, apply

KERNELS = ("batchnorm_relu_maxpool_forward_train", "batchnorm_relu_maxpool_backward")
_AXIS = (3,)  # the kept (channel) axis of (N, H, W, C)


def _pool_attrs(pool_size):
    return dict(pool_size=pool_size, strides=pool_size, padding="valid",
                data_format="channels_last")


class BatchNormReluMaxPoolTrain(Op):
    """(max_pool(relu(bn(x))), batch_mean, batch_var); x (N, H, W, C), the pool 'valid' with
    strides == pool_size; gamma, beta (C) optional."""

    name = "batch_norm_relu_max_pool_train"
    n_outputs = 3
    device_native = True

    def output_spec(self, x, gamma=None, beta=None, epsilon=1e-3, pool_size=(2, 2)):
        n, h, w, c = su.shape_of(x)
        _R["batch_norm_relu_train"].output_spec(x, gamma, beta, axis=_AXIS, epsilon=epsilon)
        pooled = _R["max_pool2d"].output_spec(x, **_pool_attrs(pool_size))
        return [tuple(pooled), (c,), (c,)]

    def forward(self, dev, x, gamma=None, beta=None, epsilon=1e-3, pool_size=(2, 2)):
        if not fusable(dev, pool_size):  # the chain's ops, same results
            (out, mean, var), bn_saved = _R["batch_norm_relu_train"].forward(
                dev, x, gamma, beta, axis=_AXIS, epsilon=epsilon)
            y, pool_saved = _R["max_pool2d"].forward(dev, out, **_pool_attrs(pool_size))
            return (y, mean, var), ("chain", bn_saved, pool_saved)
        self.output_spec(x, gamma, beta, epsilon, pool_size)  # the chain's errors, up front
        N, H, W, C = x.shape
        ph, pw = pool_size
        xs = dev.contiguous(x)
        y = dev.empty((N, H // ph, W // pw, C))
        pos = dev.empty(y.shape, np.int8)
        var, mean, inv_std, scale, shift = (dev.empty((C,)) for _ in range(5))
        dev.kernels["batchnorm_relu_maxpool_forward_train"](
            y, pos, var, mean, inv_std, scale, shift, xs, None if gamma is None else
            gamma.reshape(-1), None if beta is None else beta.reshape(-1), N, H, W, C, ph, pw,
            epsilon)
        saved = ("fused", xs, pos, mean, inv_std, scale, shift, gamma,
                 None if beta is None else beta.shape)
        return (y, dev.copy(mean), var), saved

    def backward(self, dev, saved, grads, needs, epsilon=1e-3, pool_size=(2, 2)):
        if saved[0] == "chain":
            _, bn_saved, pool_saved = saved
            (g,) = _R["max_pool2d"].backward(dev, pool_saved, grads[0], [True],
                                             **_pool_attrs(pool_size))
            return _R["batch_norm_relu_train"].backward(
                dev, bn_saved, [g, grads[1], grads[2]], needs, axis=_AXIS, epsilon=epsilon)
        _, xs, pos, mean, inv_std, scale, shift, gamma, beta_shape = saved
        gy, gmean, gvar = grads
        N, H, W, C = xs.shape
        dx = dev.empty(xs.shape) if needs[0] else None
        dgamma = dev.empty((C,)) if needs[1] else None
        dbeta = dev.empty((C,)) if needs[2] else None
        dev.kernels["batchnorm_relu_maxpool_backward"](
            dx, dgamma, dbeta, dev.contiguous(gy), pos, xs, mean, inv_std, scale, shift,
            None if gamma is None else gamma.reshape(-1), N, H, W, C, *pool_size)
        if dx is not None and dx.size and not (zero_filled(gmean) and zero_filled(gvar)):
            v = _View(xs.shape, _AXIS)
            dx = v.from_kernel(_statistics_gradient(dev, v.to_kernel(dx), gmean, gvar,
                                                    v.to_kernel(xs), mean, v))
        return (dx, None if dgamma is None else dgamma.reshape(gamma.shape),
                None if dbeta is None else dbeta.reshape(beta_shape))


def fusable(dev, pool_size):
    """Whether `dev` runs this pool in the fused kernels (else the chain's ops run)."""
    return pool_size[0] * pool_size[1] <= 128 and all(k in dev.kernels for k in KERNELS)


def batch_norm_relu_max_pool_train(x, gamma=None, beta=None, epsilon=1e-3, pool_size=2):
    """max_pool(relu(batch_norm_train(x)), pool_size, strides=pool_size, 'valid') as one op.

    Internal (no Keras name): the training plan's BatchNormalization + ReLU + MaxPooling2D
    fusion.

    Args:
        x: (N, H, W, C), channels_last; the statistics are taken over N, H and W.
        gamma, beta: per-channel scale and offset (C), or None.
        epsilon: added to the variance inside the square root.
        pool_size: the pooling window and stride, an int or a pair.

    Returns:
        (y, batch_mean, batch_variance): y (N, H // pool_h, W // pool_w, C); the biased
        variance.
    """
    if len(su.shape_of(x)) != 4:
        raise ValueError("`batch_norm_relu_max_pool_train` takes a rank-4 (N, H, W, C) input, "
                         f"received shape {su.shape_of(x)}.")
    return apply(_R["batch_norm_relu_max_pool_train"], x, gamma, beta, epsilon=float(epsilon),
                 pool_size=normalize_tuple(pool_size, 2, "pool_size"))
