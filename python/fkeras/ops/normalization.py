"""Batch normalization ops: training (batch statistics) and inference (given statistics).

`axis` names the KEPT (feature) axes, as in BatchNormalization: statistics are taken over every
other axis. The kernels see the tensor as (outer, C, inner): when the kept axes are contiguous
that is a free reshape (C = the product of their sizes); otherwise the op transposes the kept
axes to the end, giving (outer, C, 1), and transposes the result back.
"""

import numpy as np

from fkeras.backend import codes
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.engine.tape import zero_filled
from fkeras.ops import shape_utils as su
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import Op, apply


def kept_axes(axis, ndim, op_name="batch_normalization"):
    """Sorted non-negative kept axes from an int or a list (negative allowed); checks range."""
    axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    out = []
    for a in axes:
        if not isinstance(a, (int, np.integer)) or not -ndim <= a < ndim:
            raise ValueError(
                "Invalid value for `axis` argument. Expected 0 <= axis < inputs.rank (with "
                f"inputs.rank={ndim}). Received: axis={axis}")
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"Duplicate axis: {axis}")
    return tuple(sorted(out))


class _View:
    """How a tensor of `shape` is seen as (outer, C, inner) for the kept `axes`."""

    def __init__(self, shape, axes):
        self.shape = tuple(shape)
        self.kept = tuple(shape[a] for a in axes)
        self.C = int(np.prod(self.kept))
        if list(axes) == list(range(axes[0], axes[-1] + 1)):
            self.perm = None
            self.outer = int(np.prod(shape[:axes[0]]))
            self.inner = int(np.prod(shape[axes[-1] + 1:]))
        else:
            reduced = [a for a in range(len(shape)) if a not in axes]
            self.perm = tuple(reduced) + tuple(axes)
            self.outer, self.inner = int(np.prod([shape[a] for a in reduced])), 1
        self.m = self.outer * self.inner  # elements per channel

    def to_kernel(self, x):
        if self.perm is not None:
            x = np.transpose(x, self.perm)
        if type(x) is np.ndarray:  # (device buffers are contiguous)
            x = np.ascontiguousarray(x)
        return x.reshape(self.outer, self.C, self.inner)

    def from_kernel(self, y):
        if self.perm is None:
            return y.reshape(self.shape)
        permuted = tuple(self.shape[a] for a in self.perm)
        return np.ascontiguousarray(np.transpose(y.reshape(permuted), np.argsort(self.perm)))


def _flat(a):
    return None if a is None else a.reshape(-1)


def _one_axis(attrs):
    # One kept axis is a free (outer, C, inner) view; several may need a transpose, which
    # runs on the host.
    axis = attrs.get("axis", (-1,))
    return isinstance(axis, (int, np.integer)) or len(axis) == 1


def _param_spec(name, p, kept):
    if p is not None and None not in kept and int(np.prod(su.shape_of(p))) != int(np.prod(kept)):
        raise ValueError(f"`batch_normalization`: `{name}` must hold one value per channel "
                         f"(shape {kept}), received shape {su.shape_of(p)}.")


def _statistics_gradient(dev, dx, gmean, gvar, xv, mean, v):
    """dx plus the gradient through the mean and variance outputs (d mean/dx = 1/m,
    d var/dx = 2 (x - mean) / m), computed on the host (rare: the statistics are seldom
    differentiated)."""
    h = dev.to_numpy
    gm, gv = np.asarray(h(gmean), np.float32), np.asarray(h(gvar), np.float32)
    if not (np.any(gm) or np.any(gv)):
        return dx
    out = h(dx) + (gm.reshape(1, v.C, 1) + 2.0 * gv.reshape(1, v.C, 1)
                   * (h(xv) - h(mean).reshape(1, v.C, 1))) / v.m
    return dev.asarray(out.astype(np.float32, copy=False)) if not dev.is_host else \
        out.astype(np.float32, copy=False)


class BatchNormTrain(Op):
    """(y, mean, var): y normalized with the batch mean and biased variance over the non-kept
    axes; mean and var have the kept axes' shape. gamma and beta are optional."""

    name = "batch_norm_train"
    n_outputs = 3
    device_native = True

    def native_on(self, inputs, attrs):
        return _one_axis(attrs)

    def output_spec(self, x, gamma=None, beta=None, axis=(-1,), epsilon=1e-3):
        shape = su.shape_of(x)
        kept = tuple(shape[a] for a in kept_axes(axis, len(shape)))
        _param_spec("gamma", gamma, kept)
        _param_spec("beta", beta, kept)
        return [shape, kept, kept]

    def forward(self, dev, x, gamma=None, beta=None, axis=(-1,), epsilon=1e-3):
        v = _View(x.shape, kept_axes(axis, x.ndim))
        xv = v.to_kernel(x)
        y = dev.empty(xv.shape)
        var, mean, inv_std = dev.empty((v.C,)), dev.empty((v.C,)), dev.empty((v.C,))
        dev.kernels["batchnorm_forward_train"](y, var, mean, inv_std, xv, _flat(gamma),
                                               _flat(beta), v.outer, v.C, v.inner, epsilon)
        saved = (v, xv, mean, inv_std, gamma, None if beta is None else beta.shape)
        return (v.from_kernel(y), dev.copy(mean).reshape(v.kept), var.reshape(v.kept)), saved

    def backward(self, dev, saved, grads, needs, axis=(-1,), epsilon=1e-3):
        v, xv, mean, inv_std, gamma, beta_shape = saved
        gy, gmean, gvar = grads
        dyv = v.to_kernel(gy)
        dx = dev.empty(xv.shape) if needs[0] else None
        dgamma = dev.empty((v.C,)) if needs[1] else None
        dbeta = dev.empty((v.C,)) if needs[2] else None
        dev.kernels["batchnorm_backward"](dx, dgamma, dbeta, dyv, xv, mean, inv_std,
                                          _flat(gamma), v.outer, v.C, v.inner)
        if dx is not None and v.m and not (zero_filled(gmean) and zero_filled(gvar)):
            dx = _statistics_gradient(dev, dx, gmean, gvar, xv, mean, v)
        return (None if dx is None else v.from_kernel(dx),
                None if dgamma is None else dgamma.reshape(gamma.shape),
                None if dbeta is None else dbeta.reshape(beta_shape))


class BatchNormInfer(Op):
    """y = (x - mean) / sqrt(variance + epsilon) * scale + offset, per kept channel."""

    name = "batch_norm_infer"
    device_native = True

    def native_on(self, inputs, attrs):
        return _one_axis(attrs)

    def output_spec(self, x, mean, variance, offset=None, scale=None, axis=(-1,),
                    epsilon=1e-3):
        shape = su.shape_of(x)
        kept = tuple(shape[a] for a in kept_axes(axis, len(shape)))
        for name, p in (("mean", mean), ("variance", variance), ("offset", offset),
                        ("scale", scale)):
            _param_spec(name, p, kept)
        return shape

    def forward(self, dev, x, mean, variance, offset=None, scale=None, axis=(-1,),
                epsilon=1e-3):
        v = _View(x.shape, kept_axes(axis, x.ndim))
        xv = v.to_kernel(x)
        y = dev.empty(xv.shape)
        dev.kernels["batchnorm_forward_infer"](y, xv, _flat(mean), _flat(variance),
                                               _flat(scale), _flat(offset), v.outer, v.C,
                                               v.inner, epsilon)
        return v.from_kernel(y), (v, xv, mean, variance, offset, scale)

    def backward(self, dev, saved, gy, needs, axis=(-1,), epsilon=1e-3):
        v, xv, mean, variance, offset, scale = saved
        dyv = v.to_kernel(gy)
        zeros = dev.zeros((v.C,))
        dx = None
        if needs[0]:
            # dx = dy * scale / sqrt(var + eps): the inference kernel applied to dy with mean 0.
            dx = dev.empty(xv.shape)
            dev.kernels["batchnorm_forward_infer"](dx, dyv, zeros, _flat(variance),
                                                   _flat(scale), None, v.outer, v.C, v.inner,
                                                   epsilon)
            dx = v.from_kernel(dx)
        if not any(needs[1:]):
            return dx, None, None, None, None
        h = dev.to_numpy  # the statistics' gradients are computed on the host
        d64 = h(dyv).astype(np.float64)
        inv = 1.0 / np.sqrt(h(variance).reshape(-1).astype(np.float64) + epsilon)
        g = np.ones(v.C) if scale is None else h(scale).reshape(-1).astype(np.float64)
        xc = h(xv).astype(np.float64) - h(mean).reshape(1, v.C, 1)
        sum_dy = d64.sum(axis=(0, 2))
        sum_dy_xc = (d64 * xc).sum(axis=(0, 2))
        cast = dev.asarray
        grads = [
            cast(-sum_dy * g * inv).reshape(mean.shape) if needs[1] else None,
            cast(-0.5 * sum_dy_xc * g * inv**3).reshape(variance.shape) if needs[2] else None,
            cast(sum_dy).reshape(offset.shape) if needs[3] and offset is not None else None,
            cast(sum_dy_xc * inv).reshape(scale.shape) if needs[4] and scale is not None
            else None,
        ]
        return (dx, *grads)


# ---- BatchNormalization + ReLU as one op (trainers/plan_fusion.py applies them) ----

def _relu_pair_forward(dev, y):
    """relu(y) with the activation kernel: the fused ops' path on a device without the fused
    kernels (the unfused pair's kernels, same results)."""
    out = dev.empty(y.shape)
    dev.kernels["activation_forward"](out, y, y.size, codes.RELU, 0.0)
    return out


def _relu_pair_backward(dev, g, y, out):
    dx = dev.empty(y.shape)
    dev.kernels["activation_backward"](dx, dev.contiguous(g), y, out, y.size, codes.RELU, 0.0)
    return dx


class BatchNormReluTrain(BatchNormTrain):
    """(relu(y), mean, var): `batch_norm_train` followed by ReLU in one op. The fused kernels
    write relu(y) in the normalization's write pass and gate the cotangent with the ReLU mask
    inside the backward's two passes (recomputed from x, so y is never read back); a device
    without them runs the unfused pair's kernels. Same results either way."""

    name = "batch_norm_relu_train"

    def forward(self, dev, x, gamma=None, beta=None, axis=(-1,), epsilon=1e-3):
        kernel = dev.kernels.get("batchnorm_relu_forward_train")
        if kernel is None:
            (y, mean, var), saved = super().forward(dev, x, gamma, beta, axis, epsilon)
            out = _relu_pair_forward(dev, y)
            return (out, mean, var), ("pair", saved, y, out)
        v = _View(x.shape, kept_axes(axis, x.ndim))
        xv = v.to_kernel(x)
        y = dev.empty(xv.shape)
        var, mean, inv_std = dev.empty((v.C,)), dev.empty((v.C,)), dev.empty((v.C,))
        scale, shift = dev.empty((v.C,)), dev.empty((v.C,))
        kernel(y, var, mean, inv_std, scale, shift, xv, _flat(gamma), _flat(beta), v.outer, v.C,
               v.inner, epsilon)
        saved = ("fused", v, xv, mean, inv_std, scale, shift, gamma,
                 None if beta is None else beta.shape)
        return (v.from_kernel(y), dev.copy(mean).reshape(v.kept), var.reshape(v.kept)), saved

    def backward(self, dev, saved, grads, needs, axis=(-1,), epsilon=1e-3):
        if saved[0] == "pair":
            _, bn_saved, y, out = saved
            gy = _relu_pair_backward(dev, grads[0], y, out)
            return super().backward(dev, bn_saved, [gy, grads[1], grads[2]], needs, axis=axis,
                                    epsilon=epsilon)
        _, v, xv, mean, inv_std, scale, shift, gamma, beta_shape = saved
        gy, gmean, gvar = grads
        dyv = v.to_kernel(gy)
        dx = dev.empty(xv.shape) if needs[0] else None
        dgamma = dev.empty((v.C,)) if needs[1] else None
        dbeta = dev.empty((v.C,)) if needs[2] else None
        dev.kernels["batchnorm_relu_backward"](dx, dgamma, dbeta, dyv, xv, mean, inv_std, scale,
                                               shift, _flat(gamma), v.outer, v.C, v.inner)
        if dx is not None and v.m and not (zero_filled(gmean) and zero_filled(gvar)):
            dx = _statistics_gradient(dev, dx, gmean, gvar, xv, mean, v)
        return (None if dx is None else v.from_kernel(dx),
                None if dgamma is None else dgamma.reshape(gamma.shape),
                None if dbeta is None else dbeta.reshape(beta_shape))


class BatchNormReluInfer(BatchNormInfer):
    """relu(batch_normalization(x, ...)) in one op: one pass over x with the fused kernel (the
    unfused pair's kernels on a device without it). The backward (frozen statistics, rare)
    gates the cotangent with relu(y) > 0, then runs batch_norm_infer's backward."""

    name = "batch_norm_relu_infer"

    def forward(self, dev, x, mean, variance, offset=None, scale=None, axis=(-1,),
                epsilon=1e-3):
        kernel = dev.kernels.get("batchnorm_relu_forward_infer")
        if kernel is None:
            y, saved = super().forward(dev, x, mean, variance, offset, scale, axis, epsilon)
            out = _relu_pair_forward(dev, y)
            return out, (saved, out)
        v = _View(x.shape, kept_axes(axis, x.ndim))
        xv = v.to_kernel(x)
        y = dev.empty(xv.shape)
        kernel(y, xv, _flat(mean), _flat(variance), _flat(scale), _flat(offset), v.outer, v.C,
               v.inner, epsilon)
        out = v.from_kernel(y)
        return out, ((v, xv, mean, variance, offset, scale), out)

    def backward(self, dev, saved, gy, needs, axis=(-1,), epsilon=1e-3):
        bn_saved, out = saved
        # relu'(pre) from the output: out > 0 exactly where pre > 0 (NaN: closed in both).
        g = _relu_pair_backward(dev, gy, out, out)
        return super().backward(dev, bn_saved, g, needs, axis=axis, epsilon=epsilon)


# ---- public functions ----

def batch_norm_train(x, gamma=None, beta=None, axis=-1, epsilon=1e-3):
    """Training-mode batch normalization: returns (y, batch_mean, batch_variance).

    Args:
        x: any rank.
        gamma, beta: per-channel scale and offset (or None), one value per kept element.
        axis: the kept axis or axes (BatchNormalization's meaning); negative allowed.
        epsilon: added to the variance inside the square root.

    Returns:
        y like x; mean and the biased variance with the kept axes' shape.
    """
    axes = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
    return apply(_R["batch_norm_train"], x, gamma, beta, axis=axes, epsilon=float(epsilon))


def batch_normalization(x, mean, variance, axis, offset=None, scale=None, epsilon=1e-3):
    """keras.ops.batch_normalization: normalizes x with the given statistics.

    Args:
        x: any rank.
        mean, variance: one value per channel of `axis` (the feature axis, which is kept).
        axis: the feature axis (an int, or a list of kept axes).
        offset, scale: optional beta and gamma.
        epsilon: added to the variance inside the square root.

    Example:
    ```python
    y = fkeras.ops.batch_normalization(x, mean, var, axis=-1, scale=gamma, offset=beta)
    ```
    """
    axes = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
    return apply(_R["batch_norm_infer"], x, mean, variance, offset, scale, axis=axes,
                 epsilon=float(epsilon))


def batch_norm_relu_train(x, gamma=None, beta=None, axis=-1, epsilon=1e-3):
    """relu of `batch_norm_train`'s y, in one op: returns (relu(y), batch_mean, batch_variance).

    Internal (no Keras name): the training step's BatchNormalization + ReLU fusion
    (fkeras/trainers/plan_fusion.py). Arguments as `batch_norm_train`.
    """
    axes = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
    return apply(_R["batch_norm_relu_train"], x, gamma, beta, axis=axes, epsilon=float(epsilon))


def batch_normalization_relu(x, mean, variance, axis, offset=None, scale=None, epsilon=1e-3):
    """relu(batch_normalization(x, ...)) in one op (internal, as `batch_norm_relu_train`)."""
    axes = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
    return apply(_R["batch_norm_relu_infer"], x, mean, variance, offset, scale, axis=axes,
                 epsilon=float(epsilon))


def moments(x, axes, keepdims=False, synchronized=False):
    """keras.ops.moments: (mean, biased variance) over `axes`, differentiable.

    synchronized=True under a DataParallel distribution: the moments of the global batch
    (every process's rows); otherwise the local ones."""
    from fkeras.distribution import _state as _dist
    from fkeras.ops import math

    if synchronized and _dist.COMM is not None and not isinstance(x, KerasTensor):
        from fkeras.distribution.sync_ops import synchronized_moments

        return synchronized_moments(x, su.normalize_axes(axes, len(x.shape)), keepdims)

    mean = math.mean(x, axis=axes, keepdims=True)
    centred = math.subtract(x, mean)
    variance = math.mean(math.square(centred), axis=axes, keepdims=keepdims)
    if not keepdims:
        mean = math.mean(x, axis=axes, keepdims=False)
    return mean, variance


# ---- layer normalization, L2 normalization, stop_gradient ----

def _norm_axes(axis, ndim, op_name):
    axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    out = []
    for a in axes:
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)) or not -ndim <= a < ndim:
            raise ValueError(f"`{op_name}`: axis {a} is out of bounds for an input of rank "
                             f"{ndim}. Received: axis={axis}")
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"`{op_name}`: duplicate axis in axis={axis}")
    return tuple(sorted(out))


def _broadcast_param(p, shape, axes):
    """A per-normalized-element parameter reshaped to broadcast against `shape`."""
    if p is None:
        return None
    return p.reshape(tuple(d if i in axes else 1 for i, d in enumerate(shape)))


class LayerNorm(Op):
    """y = (x - mean_A) / sqrt(var_A + eps) * gamma + beta over the normalized axes A (biased
    variance); with `rms_scaling` (Keras 3's deprecated flag): y = x / sqrt(var_A + eps) * gamma
    (the input scaled by its variance, not centred, as Keras computes it). Statistics are
    accumulated in float64."""

    name = "layer_norm"

    device_native = True

    def native_on(self, inputs, attrs):
        # The last axis runs on the fused kernels; other axes compute in NumPy (host).
        ndim = len(inputs[0].shape)
        return _norm_axes(attrs.get("axis", (-1,)), ndim, "layer_normalization") == (ndim - 1,)

    def output_spec(self, x, gamma=None, beta=None, axis=(-1,), epsilon=1e-3,
                    rms_scaling=False):
        shape = su.shape_of(x)
        axes = _norm_axes(axis, len(shape), "layer_normalization")
        kept = tuple(shape[a] for a in axes)
        _param_spec("gamma", gamma, kept)
        _param_spec("beta", beta, kept)
        return shape

    def forward(self, dev, x, gamma=None, beta=None, axis=(-1,), epsilon=1e-3,
                rms_scaling=False):
        axes = _norm_axes(axis, x.ndim, "layer_normalization")
        if axes == (x.ndim - 1,) and "layer_norm_forward" in dev.kernels:
            return self._forward_rows(dev, x, gamma, beta, epsilon, rms_scaling)
        x64 = x.astype(np.float64)
        mean = x64.mean(axis=axes, keepdims=True)
        centred = x64 - mean
        inv = 1.0 / np.sqrt((centred * centred).mean(axis=axes, keepdims=True) + epsilon)
        z = (x64 if rms_scaling else centred) * inv
        g = _broadcast_param(gamma, x.shape, axes)
        b = _broadcast_param(beta, x.shape, axes)
        y = z if g is None else z * g
        if b is not None:
            y = y + b
        saved = (axes, x64, centred, z, inv, gamma, beta)
        return dev.asarray(y), saved

    def backward(self, dev, saved, dy, needs, axis=(-1,), epsilon=1e-3, rms_scaling=False):
        if saved[0] == "rows":
            return self._backward_rows(dev, saved, dy, needs, rms_scaling)
        axes, x64, centred, z, inv, gamma, beta = saved
        dy = dy.astype(np.float64)
        reduce = tuple(i for i in range(dy.ndim) if i not in axes)
        dx = dgamma = dbeta = None
        if needs[0]:
            g = _broadcast_param(gamma, dy.shape, axes)
            dz = dy if g is None else dy * g
            if rms_scaling:  # z = x * inv, d inv / d x = -inv^3 (x - mean) / n
                dx = inv * dz - centred * inv**3 * (dz * x64).mean(axis=axes, keepdims=True)
            else:
                dx = inv * (dz - dz.mean(axis=axes, keepdims=True)
                            - z * (dz * z).mean(axis=axes, keepdims=True))
            dx = dev.asarray(dx)
        if needs[1] and gamma is not None:
            dgamma = dev.asarray((dy * z).sum(axis=reduce).reshape(gamma.shape))
        if len(needs) > 2 and needs[2] and beta is not None:
            dbeta = dev.asarray(dy.sum(axis=reduce).reshape(beta.shape))
        return dx, dgamma, dbeta

    # The last-axis case on the fused kernels: x seen as (rows, D).
    @staticmethod
    def _forward_rows(dev, x, gamma, beta, epsilon, rms_scaling):
        D = x.shape[-1]
        rows = x.size // D if D else int(np.prod(x.shape[:-1]))
        x2 = dev.asarray(x)  # integer inputs normalize as floats, as on the NumPy path
        gamma = None if gamma is None else dev.asarray(gamma)
        beta = None if beta is None else dev.asarray(beta)
        y = dev.empty(x.shape)
        mean, rstd = dev.empty((rows,)), dev.empty((rows,))
        dev.kernels["layer_norm_forward"](y, mean, rstd, x2, _flat(gamma), _flat(beta), rows,
                                          D, float(epsilon), bool(rms_scaling))
        return y, ("rows", x2, mean, rstd, gamma, beta, rows, D)

    @staticmethod
    def _backward_rows(dev, saved, dy, needs, rms_scaling):
        _, x2, mean, rstd, gamma, beta, rows, D = saved
        dx = dev.empty(x2.shape) if needs[0] else None
        dgamma = dev.empty((D,)) if needs[1] and gamma is not None else None
        dbeta = (dev.empty((D,)) if len(needs) > 2 and needs[2] and beta is not None
                 else None)
        if dx is not None or dgamma is not None or dbeta is not None:
            dev.kernels["layer_norm_backward"](dx, dgamma, dbeta, dev.asarray(dy), x2,
                                               mean, rstd, _flat(gamma), rows, D,
                                               bool(rms_scaling))
        return (dx, None if dgamma is None else dgamma.reshape(gamma.shape),
                None if dbeta is None else dbeta.reshape(beta.shape))


class L2Normalize(Op):
    """y = x * min(1 / sqrt(sum_A x^2), 1 / epsilon): keras.ops.normalize with order 2."""

    name = "l2_normalize"

    def output_spec(self, x, axis=(-1,), epsilon=1e-12):
        shape = su.shape_of(x)
        _norm_axes(axis, len(shape), "normalize")
        return shape

    def forward(self, dev, x, axis=(-1,), epsilon=1e-12):
        axes = _norm_axes(axis, x.ndim, "normalize")
        x64 = x.astype(np.float64)
        with np.errstate(divide="ignore"):
            inv = 1.0 / np.sqrt((x64 * x64).sum(axis=axes, keepdims=True))
        clipped = inv >= 1.0 / epsilon
        inv = np.where(clipped, 1.0 / epsilon, inv)
        return dev.asarray(x64 * inv), (axes, x64, inv, clipped)

    def backward(self, dev, saved, dy, needs, axis=(-1,), epsilon=1e-12):
        axes, x64, inv, clipped = saved
        dy = dy.astype(np.float64)
        # Unclipped: d(x / |x|) = (dy - x <dy, x> / |x|^2) / |x|; clipped: a constant scale.
        proj = np.where(clipped, 0.0, inv**3) * (dy * x64).sum(axis=axes, keepdims=True)
        return (dev.asarray(inv * dy - x64 * proj),)


class StopGradient(Op):
    """The identity in the forward; no gradient flows back."""

    name = "stop_gradient"

    def output_spec(self, x):
        return su.shape_of(x)

    def forward(self, dev, x):
        return x.copy(), None

    def backward(self, dev, saved, g, needs):
        return (None,)


def layer_normalization(x, gamma=None, beta=None, axis=-1, epsilon=None, **kwargs):
    """keras.ops.layer_normalization: normalizes over `axis` (int or list), then gamma, beta.

    Args:
        x: any rank.
        gamma, beta: optional, one value per normalized element (the normalized axes' shape).
        axis: the normalized axis or axes.
        epsilon: added to the variance (None: 1e-7, keras.config.epsilon()).
        **kwargs: only `rms_scaling`, Keras 3's deprecated flag (warns as Keras does):
            x / sqrt(var + epsilon) * gamma, uncentred.

    Example:
    ```python
    y = fkeras.ops.layer_normalization(x, gamma, beta, axis=-1, epsilon=1e-3)
    ```
    """
    rms_scaling = kwargs.pop("rms_scaling", False)
    if kwargs:
        raise TypeError("layer_normalization() got unexpected keyword arguments "
                        f"{sorted(kwargs)}; it accepts gamma, beta, axis, epsilon and the "
                        "deprecated rms_scaling.")
    if rms_scaling:
        import warnings

        warnings.warn("You passed `rms_scaling=True`, which is deprecated. This argument "
                      "incorrectly scales the input by the variance, not the root mean "
                      "square. To correctly use RMS Normalization, please use "
                      "`keras.ops.rms_normalization` / `keras.ops.nn.rms_normalization` "
                      "instead.", stacklevel=2)
    return layer_norm(x, gamma, beta, axis, epsilon, rms_scaling)


def layer_norm(x, gamma=None, beta=None, axis=-1, epsilon=None, rms_scaling=False):
    """layer_normalization without the deprecation warning (the LayerNormalization layer's op)."""
    axes = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
    return apply(_R["layer_norm"], x, gamma, beta, axis=axes,
                 epsilon=1e-7 if epsilon is None else float(epsilon),
                 rms_scaling=bool(rms_scaling))


def normalize(x, axis=-1, order=2, epsilon=None):
    """keras.ops.normalize for order 2: x * min(rsqrt(sum(x^2, axis)), 1 / epsilon).

    Example:
    ```python
    y = fkeras.ops.normalize(x, axis=-1)   # unit L2 norm along the last axis
    ```
    """
    if isinstance(order, bool) or not isinstance(order, int) or order < 1:
        raise ValueError(f"Argument `order` must be an int >= 1. Received: order={order}")
    if order != 2:
        raise ValueError(f"`normalize` supports order=2 only. Received: order={order}")
    axes = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
    return apply(_R["l2_normalize"], x, axis=axes,
                 epsilon=1e-7 if epsilon is None else float(epsilon))


def stop_gradient(variable):
    """keras.ops.stop_gradient: `variable` (a tensor), with no gradient flowing back."""
    return apply(_R["stop_gradient"], variable)
