"""BatchNormalization's composed training paths: renorm, ghost batches, adjustment, masks.

Formulas (tf_keras 2.x `BatchNormalizationBase.call`, Keras 3 for renorm and masks):
- normalized values xhat = (x - mu) / sqrt(var + eps), with the batch (or ghost-batch) moments,
  gradients flowing through mu and var;
- renorm: r = clip(sigma / max(renorm_stddev, sqrt(eps)), rmin, rmax),
  d = clip((mu - renorm_mean) / max(renorm_stddev, sqrt(eps)), -dmax, dmax), sigma =
  sqrt(var + eps), computed from the statistics BEFORE this step's update, without gradient;
- adjustment (a, b) = adjustment(input shape), in training only, with gradient;
- y = ((xhat * r + d) * a + b) * gamma + beta (absent terms are the identity);
- ghost batches: x of batch B is seen as (v, B / v, ...) and reduced over axis 0 (and the other
  non-kept axes), so ghost batch k holds samples k, k + B/v, ...; the moving statistics move
  towards the means over ghost batches of the ghost means and variances;
- renorm updates: renorm_mean, renorm_stddev with renorm_momentum towards mu, sigma;
  moving_mean and moving_stddev with momentum; moving_variance = relu(moving_stddev^2 - eps).
Statistics for the moving averages and r, d are computed in NumPy float64 on the batch values
(they carry no gradient); the output is built from fkeras ops, so its gradient is exact.
"""

import numpy as np

from fkeras import ops
from fkeras.backend import devices as _devices
from fkeras.engine.keras_tensor import KerasTensor

_CLIPPING_KEYS = ["rmax", "rmin", "dmax"]


def check_arguments(layer):
    """Constructor checks for renorm, virtual_batch_size, adjustment and fused."""
    if layer.renorm:
        clipping = layer.renorm_clipping or {}
        if not isinstance(clipping, dict) or set(clipping) - set(_CLIPPING_KEYS):
            raise ValueError("Received invalid keys for `renorm_clipping` argument: "
                             f"{clipping}. Supported values: {_CLIPPING_KEYS}.")
        rmax, rmin, dmax = (clipping.get(k) for k in ("rmax", "rmin", "dmax"))
        if rmax is not None and rmin is not None and rmax < rmin:
            raise ValueError("rmax should be greater than rmin in the `renorm_clipping` "
                             f"argument. Received: rmax={rmax}, rmin={rmin}.")
        if dmax is not None and dmax < 0:
            raise ValueError("dmax should be non-negative in the `renorm_clipping` argument. "
                             f"Received: dmax={dmax}.")
        layer.renorm_clipping = clipping
    v = layer.virtual_batch_size
    if v is not None:
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise ValueError("`virtual_batch_size` must be a positive integer that divides the "
                             f"true batch size of the input tensor. Received: "
                             f"virtual_batch_size={v}")
        if layer.adjustment is not None:
            raise ValueError("When using `virtual_batch_size`, adjustment cannot be specified")
    if layer.adjustment is not None and not callable(layer.adjustment):
        raise ValueError("`adjustment` must be a callable taking the input shape and returning "
                         f"(scale, bias). Received: adjustment={layer.adjustment!r}")
    if layer.fused not in (None, True, False):
        raise ValueError(f"`fused` must be None, True or False. Received: fused={layer.fused}")
    if layer.fused:
        if layer.renorm:
            raise ValueError("Passing both `fused=True` and `renorm=True` is not supported")
        if v is not None:
            raise ValueError("Passing `fused=True` is not supported when `virtual_batch_size` "
                             "is specified.")
        if layer.adjustment is not None:
            raise ValueError("Passing `fused=True` is not supported when `adjustment` is "
                             "specified.")


def sqrt_initializer(initializer):
    """The moving/renorm stddev initializer: sqrt of the moving-variance initializer."""
    def init(shape, dtype="float32"):
        return np.sqrt(np.asarray(initializer(shape, dtype=dtype), np.float32))
    return init


def _bshape(layer, ndim, shape):
    """Broadcast shape of a per-channel parameter against an input of `shape`."""
    return tuple(shape[i] if i in layer._axes else 1 for i in range(ndim))


def _affine(layer, z, shape, r=None, d=None):
    """((z * r + d) * a + b) * gamma + beta on the normalized values z (absent: identity)."""
    bshape = _bshape(layer, len(shape), shape)
    if r is not None:
        z = ops.add(ops.multiply(z, r.reshape(bshape)), d.reshape(bshape))
    if layer.adjustment is not None:
        a, b = layer.adjustment(tuple(shape))
        z = ops.add(ops.multiply(z, a), b)
    if layer.gamma is not None:
        z = ops.multiply(z, ops.reshape(layer.gamma, bshape))
    if layer.beta is not None:
        z = ops.add(z, ops.reshape(layer.beta, bshape))
    return z


def _renorm_correction(layer, mean, var):
    """(r, d) from this batch's mean and variance and the current renorm statistics."""
    eps = layer.epsilon
    stddev = np.sqrt(var + eps)
    renorm_stddev = np.maximum(_devices.host_array(layer.renorm_stddev._value, np.float64).reshape(
        mean.shape), np.sqrt(eps))
    renorm_mean = _devices.host_array(layer.renorm_mean._value, np.float64).reshape(mean.shape)
    r = stddev / renorm_stddev
    d = (mean - renorm_mean) / renorm_stddev
    clip = layer.renorm_clipping
    r = np.clip(r, clip.get("rmin", 0.0), clip.get("rmax", np.inf))
    d = np.clip(d, -clip.get("dmax", np.inf), clip.get("dmax", np.inf))
    return r.astype(np.float32), d.astype(np.float32)


def _update(layer, mean, var):
    """Moving-statistics updates from this batch's (ghost-averaged) mean and variance."""
    if not layer.renorm:
        layer._update_moving(layer.moving_mean, mean)
        layer._update_moving(layer.moving_variance, var)
        return
    stddev = np.sqrt(var + layer.epsilon)
    layer._update_moving(layer.renorm_mean, mean, layer.renorm_momentum)
    layer._update_moving(layer.renorm_stddev, stddev, layer.renorm_momentum)
    layer._update_moving(layer.moving_mean, mean)
    layer._update_moving(layer.moving_stddev, stddev)
    ms = _devices.host_array(layer.moving_stddev._value, np.float64)
    layer.moving_variance.assign(np.maximum(ms * ms - layer.epsilon, 0.0))


def _symbolic(layer, x):
    """Shape inference only (the user's adjustment is not called on symbolic shapes)."""
    return ops.batch_normalization(x, layer.moving_mean, layer.moving_variance,
                                   axis=layer._axes, epsilon=layer.epsilon)


def composed_training(layer, x):
    """Training output with renorm, ghost batches and/or adjustment (and the updates)."""
    if isinstance(x, KerasTensor):
        return _symbolic(layer, x)
    shape = tuple(x.shape)
    v = layer.virtual_batch_size
    if v is not None:
        if shape[0] % v:
            raise ValueError(f'Layer "{layer.name}": virtual_batch_size={v} must divide the '
                             f"batch size, but the input has batch size {shape[0]} (input "
                             f"shape {shape}).")
        ghost = ops.reshape(x, (v, shape[0] // v) + shape[1:])
        axes = (1,) + tuple(a + 1 for a in layer._axes)
        z, mean, var = ops.batch_norm_train(ghost, None, None, axis=axes,
                                            epsilon=layer.epsilon)
        z = ops.reshape(z, shape)
        mean = _devices.host_array(mean, np.float64).mean(axis=0)
        var = _devices.host_array(var, np.float64).mean(axis=0)
    else:
        z, mean, var = ops.batch_norm_train(x, None, None, axis=layer._axes,
                                            epsilon=layer.epsilon)
        mean, var = _devices.host_array(mean, np.float64), _devices.host_array(var, np.float64)
    r = d = None
    if layer.renorm:
        r, d = _renorm_correction(layer, mean, var)
    y = _affine(layer, z, shape, r, d)
    _update(layer, mean, var)
    return y


def masked_training(layer, x, mask):
    """Keras 3's masked statistics: moments over the positions where mask is True."""
    if layer.fused:
        raise ValueError(f'Layer "{layer.name}": `fused=True` cannot be used with a mask '
                         "(the fused kernel has no masked statistics); use fused=None or "
                         "False.")
    if layer.virtual_batch_size is not None:
        raise ValueError(f'Layer "{layer.name}": a mask cannot be used with '
                         "`virtual_batch_size`.")
    if len(mask.shape) != len(x.shape) - 1:
        raise ValueError("The mask provided should be one dimension less than the inputs. "
                         f"Received: mask.shape={tuple(mask.shape)}, "
                         f"inputs.shape={tuple(x.shape)}")
    if isinstance(x, KerasTensor):
        return _symbolic(layer, x)
    shape = tuple(x.shape)
    w = np.broadcast_to(_devices.host_array(mask, np.float32)[..., None], shape)
    reduce_axes = tuple(a for a in range(len(shape)) if a not in layer._axes)
    count = w.sum(axis=reduce_axes, keepdims=True) + 1e-7
    mean = ops.divide(ops.sum(ops.multiply(x, w), reduce_axes, keepdims=True), count)
    diff = ops.multiply(ops.subtract(x, mean), w)
    var = ops.divide(ops.sum(ops.square(diff), reduce_axes, keepdims=True), count)
    kept = tuple(shape[a] for a in layer._axes)
    mean, var = ops.reshape(mean, kept), ops.reshape(var, kept)
    m64, v64 = _devices.host_array(mean, np.float64), _devices.host_array(var, np.float64)
    r = d = None
    if layer.renorm:
        r, d = _renorm_correction(layer, m64, v64)
    if r is None and layer.adjustment is None:
        y = ops.batch_normalization(x, mean, var, axis=layer._axes, offset=layer.beta,
                                    scale=layer.gamma, epsilon=layer.epsilon)
    else:
        z = ops.batch_normalization(x, mean, var, axis=layer._axes, epsilon=layer.epsilon)
        y = _affine(layer, z, shape, r, d)
    _update(layer, m64, v64)
    return y
