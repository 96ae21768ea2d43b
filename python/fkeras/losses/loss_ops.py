"""Loss ops: each Keras loss function as one op (per-sample values, forward and backward side by
side), plus the weighted reduction.

Every per-sample op takes (y_true, y_pred) and returns the loss per sample: the elementwise
losses are averaged over the last axis (Keras), the row losses (crossentropies, cosine
similarity, categorical hinge) reduce the class axis. Like Keras's, every loss is differentiable
in y_true too (a teacher's predictions as soft targets); the y_true gradient is computed only
when the tape needs it (`needs[0]`), so losses on data pay nothing for it.

The crossentropies from logits run on the fused kernels (softmax_crossentropy_*,
sparse_softmax_crossentropy_*, sigmoid_crossentropy_*); on probabilities they clip to
[epsilon, 1 - epsilon] as Keras 3 does (jax/torch/numpy backends).
"""

import abc

import numpy as np

from fkeras.backend import devices
from fkeras.ops import shape_utils as su
from fkeras.ops.registry import Op
from fkeras.ops.xp_native import float32_native, float32_only


def match_ranks(t, p):
    """Keras's squeeze_or_expand_to_same_rank for (y_true, y_pred) shapes: returns t reshaped."""
    if t.ndim == p.ndim + 1 and t.shape[-1] == 1:
        return t.reshape(t.shape[:-1])
    if p.ndim == t.ndim + 1 and p.shape[-1] == 1:
        return t.reshape(t.shape + (1,))
    return t


def check_same_shape(t_shape, p_shape, loss_name):
    if tuple(t_shape) != tuple(p_shape):
        raise ValueError(
            f"Arguments `target` and `output` of `{loss_name}` must have the same shape (fkeras "
            f"does not broadcast targets). Received: target.shape={tuple(t_shape)}, "
            f"output.shape={tuple(p_shape)}"
        )


def _as_float(t, like):
    return t if t.dtype == like.dtype else t.astype(like.dtype)


class _PerSample(Op):
    """Base of the per-sample losses: `values_forward` / `values_backward` compute the
    per-sample values; with `reduce="mean"` or `"sum"` (the unweighted reductions) the op
    returns their mean or sum directly, so an unweighted loss is one op."""

    def output_spec(self, y_true, y_pred, reduce="none", **attrs):
        return su.shape_of(y_pred)[:-1] if reduce == "none" else ()

    def forward(self, dev, y_true, y_pred, reduce="none", **attrs):
        values, saved = self.values_forward(dev, y_true, y_pred, **attrs)
        if reduce == "none":
            return values, (saved, None)
        n = values.size
        scale = (1.0 / n if n else 0.0) if reduce == "mean" else 1.0
        return dev.sum_scaled(values, scale), (saved, (values.shape, scale))

    def backward(self, dev, saved, g, needs, reduce="none", **attrs):
        inner, reduced = saved
        if reduced is not None:
            shape, scale = reduced
            g = dev.broadcast_scalar(shape, g, scale)
        return self.values_backward(dev, inner, g, needs, **attrs)


# ---- elementwise losses, averaged (or summed) over the last axis ----

class _Elementwise(_PerSample):
    reduce_sum = False  # kl_divergence sums over the last axis; the others average
    symmetric = False   # d/dy_true == -d/dy_pred
    # True: `value` and `grad` take the device's array namespace first (xp = dev.xp) and use
    # only it, so the loss runs on a non-host device's float32 buffers.
    uses_xp = False
    device_native = True

    def native_on(self, inputs, attrs):
        return self.uses_xp and float32_only(*inputs)

    def _value(self, xp, t, p, attrs):
        return self.value(xp, t, p, **attrs) if self.uses_xp else self.value(t, p, **attrs)

    def _grad(self, xp, t, p, attrs):
        return self.grad(xp, t, p, **attrs) if self.uses_xp else self.grad(t, p, **attrs)

    @abc.abstractmethod
    def value(self, t, p, **attrs):
        """Per-element loss values."""

    @abc.abstractmethod
    def grad(self, t, p, **attrs):
        """d value / d p, elementwise."""

    def __init_subclass__(cls, **kwargs):
        # Every loss gives y_true its gradient (Keras): -grad for the symmetric losses
        # (functions of p - t), else the class's `grad_true(t, p, **attrs)` (d value / d t,
        # elementwise, t as `prepare` returned it). A loss without either is refused when its
        # class is defined, not when a tape first asks.
        if not cls.symmetric and getattr(cls, "grad_true", None) is None:
            raise TypeError(f"{cls.__name__}: a non-symmetric elementwise loss defines "
                            "`grad_true`.")
        super().__init_subclass__(**kwargs)  # (registers the op: only a complete one)

    def _grad_true(self, xp, t, p, attrs):
        return self.grad_true(xp, t, p, **attrs) if self.uses_xp else \
            self.grad_true(t, p, **attrs)

    def prepare(self, t, p):
        t = _as_float(match_ranks(t, p), p)
        check_same_shape(t.shape, p.shape, self.name[5:])
        return t

    def values_forward(self, dev, y_true, y_pred, **attrs):
        xp = dev.xp
        t = self.prepare(y_true, y_pred)
        v = self._value(xp, t, y_pred, attrs)
        if xp is np:
            out = np.asarray(v.sum(axis=-1))
            if not self.reduce_sum:  # NumPy's mean for float32/64: the same sum, then one divide
                out = np.true_divide(out, v.shape[-1], out=out) if out.dtype.kind == "f" \
                    else v.mean(axis=-1)
        else:  # the float64-accumulated sum rounded once, then the same divide
            out = xp.sum(v, axis=-1)
            if not self.reduce_sum:
                out = xp.divide(out, v.shape[-1])
        return xp.asarray(out, dtype=y_pred.dtype), (y_true.shape, t, y_pred)

    def values_backward(self, dev, saved, g, needs, **attrs):
        t_shape, t, p = saved
        xp = dev.xp
        scale = 1.0 if self.reduce_sum or p.shape[-1] == 0 else 1.0 / p.shape[-1]
        g = xp.asarray(g)
        gp = xp.multiply(xp.multiply(g.reshape(g.shape + (1,)), scale),
                         self._grad(xp, t, p, attrs))
        gp = xp.asarray(gp, dtype=p.dtype)
        if not needs[0]:
            return None, gp
        if self.symmetric:
            return xp.negative(gp).reshape(t_shape), gp
        gt = xp.multiply(xp.multiply(g.reshape(g.shape + (1,)), scale),
                         self._grad_true(xp, t, p, attrs))
        return xp.asarray(gt, dtype=p.dtype).reshape(t_shape), gp


class MeanSquaredError(_Elementwise):
    name = "loss_mean_squared_error"
    symmetric = True
    uses_xp = True

    def value(self, xp, t, p):
        d = xp.subtract(p, t)
        return xp.multiply(d, d)

    def grad(self, xp, t, p):
        return xp.multiply(2.0, xp.subtract(p, t))


class MeanAbsoluteError(_Elementwise):
    name = "loss_mean_absolute_error"
    symmetric = True
    uses_xp = True

    def value(self, xp, t, p):
        return xp.abs(xp.subtract(p, t))

    def grad(self, xp, t, p):
        return xp.sign(xp.subtract(p, t))


class MeanAbsolutePercentageError(_Elementwise):
    name = "loss_mean_absolute_percentage_error"
    uses_xp = True

    def value(self, xp, t, p, epsilon=1e-7):
        scale = xp.maximum(xp.abs(t), epsilon)
        return xp.multiply(100.0, xp.abs(xp.divide(xp.subtract(t, p), scale)))

    def grad(self, xp, t, p, epsilon=1e-7):
        scale = xp.maximum(xp.abs(t), epsilon)
        return xp.divide(xp.multiply(100.0, xp.sign(xp.subtract(p, t))), scale)

    def grad_true(self, xp, t, p, epsilon=1e-7):
        # 100 (sign(t - p) / s - |t - p| sign(t) (|t| >= eps) / s^2), s = max(|t|, eps)
        scale = xp.maximum(xp.abs(t), epsilon)
        d = xp.subtract(t, p)
        inner = xp.divide(xp.multiply(xp.abs(d), xp.multiply(
            xp.sign(t), xp.greater_equal(xp.abs(t), epsilon))), scale)
        return xp.divide(xp.multiply(100.0, xp.subtract(xp.sign(d), inner)), scale)


def _log1p_clipped(xp, x, epsilon):
    # log(max(x, epsilon) + 1), as written (not log1p: the cpu path's exact operations)
    return xp.log(xp.add(xp.maximum(x, epsilon), 1.0))


class MeanSquaredLogarithmicError(_Elementwise):
    name = "loss_mean_squared_logarithmic_error"
    uses_xp = True

    def value(self, xp, t, p, epsilon=1e-7):
        d = xp.subtract(_log1p_clipped(xp, p, epsilon), _log1p_clipped(xp, t, epsilon))
        return xp.multiply(d, d)

    def grad(self, xp, t, p, epsilon=1e-7):
        d = xp.subtract(_log1p_clipped(xp, p, epsilon), _log1p_clipped(xp, t, epsilon))
        # 2 * d * (p >= epsilon) / (max(p, epsilon) + 1)
        num = xp.multiply(xp.multiply(2.0, d), xp.greater_equal(p, epsilon))
        return xp.divide(num, xp.add(xp.maximum(p, epsilon), 1.0))

    def grad_true(self, xp, t, p, epsilon=1e-7):
        d = xp.subtract(_log1p_clipped(xp, p, epsilon), _log1p_clipped(xp, t, epsilon))
        num = xp.multiply(xp.multiply(-2.0, d), xp.greater_equal(t, epsilon))
        return xp.divide(num, xp.add(xp.maximum(t, epsilon), 1.0))


class Huber(_Elementwise):
    name = "loss_huber"
    symmetric = True
    uses_xp = True

    def value(self, xp, t, p, delta=1.0):
        a = xp.abs(xp.subtract(p, t))
        quadratic = xp.multiply(xp.multiply(0.5, a), a)
        linear = xp.subtract(xp.multiply(delta, a), 0.5 * delta * delta)
        return xp.where(xp.less_equal(a, delta), quadratic, linear)

    def grad(self, xp, t, p, delta=1.0):
        return xp.clip(xp.subtract(p, t), -delta, delta)


class LogCosh(_Elementwise):
    name = "loss_log_cosh"
    symmetric = True

    def value(self, t, p):
        x = p - t  # log(cosh(x)) = x + softplus(-2x) - log(2), stable for large |x|
        return x + np.logaddexp(0.0, -2.0 * x) - np.log(2.0)

    def grad(self, t, p):
        return np.tanh(p - t)


def hinge_labels(t):
    """Binary {0, 1} labels become {-1, 1} (Keras's convert_binary_labels_to_hinge)."""
    return hinge_labels_and_scale(t)[0]


def hinge_labels_and_scale(t):
    """(labels, d labels / d t): 2t - 1 and 2 for binary labels, else t and 1."""
    if t.size and np.all((t == 0) | (t == 1)):
        return 2.0 * t - 1.0, 2.0
    return t, 1.0


class Hinge(_Elementwise):
    name = "loss_hinge"

    def prepare(self, t, p):
        return hinge_labels(super().prepare(t, p))

    def values_forward(self, dev, y_true, y_pred, **attrs):
        out, (t_shape, t, p) = super().values_forward(dev, y_true, y_pred, **attrs)
        scale = hinge_labels_and_scale(_as_float(match_ranks(y_true, y_pred), y_pred))[1]
        return out, (t_shape, (t, scale), p)

    def values_backward(self, dev, saved, g, needs, **attrs):
        t_shape, (t, scale), p = saved
        return super().values_backward(dev, (t_shape, t, p), g, needs, label_scale=scale,
                                       **attrs)

    def _grad(self, xp, t, p, attrs):
        return self.grad(t, p)

    def _grad_true(self, xp, t, p, attrs):
        return self.grad_true(t, p) * attrs.get("label_scale", 1.0)

    def value(self, t, p):
        return np.maximum(1.0 - t * p, 0.0)

    def grad(self, t, p):
        return -t * (1.0 - t * p > 0)

    def grad_true(self, t, p):
        return -p * (1.0 - t * p > 0)


class SquaredHinge(Hinge):
    name = "loss_squared_hinge"

    def value(self, t, p):
        m = np.maximum(1.0 - t * p, 0.0)
        return m * m

    def grad(self, t, p):
        return -2.0 * t * np.maximum(1.0 - t * p, 0.0)

    def grad_true(self, t, p):
        return -2.0 * p * np.maximum(1.0 - t * p, 0.0)


class Poisson(_Elementwise):
    name = "loss_poisson"
    uses_xp = True

    def value(self, xp, t, p, epsilon=1e-7):  # p - t * log(p + epsilon)
        return xp.subtract(p, xp.multiply(t, xp.log(xp.add(p, epsilon))))

    def grad(self, xp, t, p, epsilon=1e-7):  # 1 - t / (p + epsilon)
        return xp.subtract(1.0, xp.divide(t, xp.add(p, epsilon)))

    def grad_true(self, xp, t, p, epsilon=1e-7):  # -log(p + epsilon)
        return xp.negative(xp.log(xp.add(p, epsilon)))


def _inside(xp, p, low, high):
    # low <= p <= high: NumPy's bool product is the logical and; the device's a 0/1 mask
    return xp.multiply(xp.greater_equal(p, low), xp.less_equal(p, high))


class KLDivergence(_Elementwise):
    name = "loss_kl_divergence"
    reduce_sum = True
    uses_xp = True

    def value(self, xp, t, p, epsilon=1e-7):  # tc * log(tc / clip(p))
        tc = xp.clip(t, epsilon, 1.0)
        return xp.multiply(tc, xp.log(xp.divide(tc, xp.clip(p, epsilon, 1.0))))

    def grad(self, xp, t, p, epsilon=1e-7):  # -tc / clip(p) * (epsilon <= p <= 1)
        tc = xp.clip(t, epsilon, 1.0)
        return xp.multiply(xp.divide(xp.negative(tc), xp.clip(p, epsilon, 1.0)),
                           _inside(xp, p, epsilon, 1.0))

    def grad_true(self, xp, t, p, epsilon=1e-7):  # (log(tc / clip(p)) + 1) * (eps <= t <= 1)
        tc = xp.clip(t, epsilon, 1.0)
        return xp.multiply(xp.add(xp.log(xp.divide(tc, xp.clip(p, epsilon, 1.0))), 1.0),
                           _inside(xp, t, epsilon, 1.0))


class BinaryCrossentropy(_Elementwise):
    """On probabilities, clipped to [epsilon, 1 - epsilon] (Keras 3)."""

    name = "loss_binary_crossentropy"
    uses_xp = True

    def value(self, xp, t, p, epsilon=1e-7):  # -(t log(pc) + (1 - t) log(1 - pc))
        pc = xp.clip(p, epsilon, 1.0 - epsilon)
        return xp.negative(xp.add(xp.multiply(t, xp.log(pc)),
                                  xp.multiply(xp.subtract(1.0, t), xp.log(xp.subtract(1.0, pc)))))

    def grad(self, xp, t, p, epsilon=1e-7):  # (-(t / pc) + (1 - t) / (1 - pc)) * inside
        pc = xp.clip(p, epsilon, 1.0 - epsilon)
        d = xp.add(xp.negative(xp.divide(t, pc)),
                   xp.divide(xp.subtract(1.0, t), xp.subtract(1.0, pc)))
        return xp.multiply(d, _inside(xp, p, epsilon, 1.0 - epsilon))

    def grad_true(self, xp, t, p, epsilon=1e-7):  # log(1 - pc) - log(pc)
        pc = xp.clip(p, epsilon, 1.0 - epsilon)
        return xp.subtract(xp.log(xp.subtract(1.0, pc)), xp.log(pc))


class BinaryCrossentropyFromLogits(_PerSample):
    """max(x, 0) - x z + log1p(exp(-|x|)), averaged over the last axis (fused kernel)."""

    name = "loss_binary_crossentropy_from_logits"
    device_native = True  # the fused kernels and dev.xp (float32 inputs on a non-host device)
    native_on = float32_native

    def values_forward(self, dev, y_true, y_pred):
        xp = dev.xp
        t = xp.ascontiguousarray(_as_float(match_ranks(y_true, y_pred), y_pred))
        check_same_shape(t.shape, y_pred.shape, "binary_crossentropy")
        x = xp.ascontiguousarray(y_pred)
        loss = dev.empty(x.shape)
        dev.kernels["sigmoid_crossentropy_forward"](loss, x, t, x.size)
        if not x.shape[-1]:
            out = xp.sum(loss, axis=-1)
        elif xp is np:  # the method: no dispatcher on the cpu's hot path
            out = loss.mean(axis=-1)
        else:
            out = xp.mean(loss, axis=-1)
        return xp.asarray(out, dtype=x.dtype), (t, x, y_true.shape)

    def values_backward(self, dev, saved, g, needs, **attrs):
        t, x, t_shape = saved
        cols = x.shape[-1] or 1
        xp = dev.xp
        if xp is np:
            dloss = np.ascontiguousarray(
                np.broadcast_to((np.asarray(g) / cols)[..., None], x.shape), dtype=x.dtype)
        else:
            g = xp.divide(xp.asarray(g), cols)
            dloss = xp.broadcast_to(g.reshape(g.shape + (1,)), x.shape)
        dx = dev.empty(x.shape)
        dev.kernels["sigmoid_crossentropy_backward"](dx, dloss, x, t, x.size)
        if not needs[0]:
            return None, dx
        return xp.multiply(dloss, xp.negative(x)).reshape(t_shape), dx  # d/dt = -x


# ---- row losses over the last (class) axis ----

def _rows(x):
    cols = x.shape[-1]
    return x.reshape(-1, cols), cols


class CategoricalCrossentropy(_PerSample):
    """On probabilities: normalized by their sum, clipped, then -sum(t log p) (Keras 3)."""

    name = "loss_categorical_crossentropy"

    def values_forward(self, dev, y_true, y_pred, epsilon=1e-7):
        t = _as_float(y_true, y_pred)
        check_same_shape(t.shape, y_pred.shape, "categorical_crossentropy")
        s = y_pred.sum(axis=-1, keepdims=True)
        q = y_pred / s
        qc = np.clip(q, epsilon, 1.0 - epsilon)
        out = -(t * np.log(qc)).sum(axis=-1)
        return np.asarray(out, dtype=y_pred.dtype), (t, s, q, qc, epsilon)

    def values_backward(self, dev, saved, g, needs, **attrs):
        t, s, q, qc, eps = saved
        dq = -(t / qc) * ((q >= eps) & (q <= 1.0 - eps)) * np.asarray(g)[..., None]
        dp = (dq - (dq * q).sum(axis=-1, keepdims=True)) / s
        dt = -np.log(qc) * np.asarray(g)[..., None] if needs[0] else None
        return dt, dp.astype(q.dtype, copy=False)


class SparseCategoricalCrossentropy(CategoricalCrossentropy):
    """Integer labels; y_pred probabilities (the one-hot form of categorical_crossentropy)."""

    name = "loss_sparse_categorical_crossentropy"

    def values_forward(self, dev, y_true, y_pred, epsilon=1e-7):
        labels = sparse_labels(y_true, y_pred)
        onehot = np.zeros(y_pred.shape, dtype=y_pred.dtype)
        np.put_along_axis(onehot, labels[..., None], 1.0, axis=-1)
        return super().values_forward(dev, onehot, y_pred, epsilon=epsilon)


def check_sparse_shape(y_true, t, y_pred):
    if tuple(t.shape) != tuple(y_pred.shape[:-1]):
        raise ValueError(
            "Arguments `target` and `output` of `sparse_categorical_crossentropy` must have "
            "the same shape up until the last dimension (integer labels, one per sample): "
            f"target.shape={tuple(y_true.shape)}, output.shape={tuple(y_pred.shape)}"
        )


def sparse_labels(y_true, y_pred):
    """Integer class labels shaped like y_pred without its class axis (checked)."""
    t = y_true
    if t.ndim == y_pred.ndim and t.shape[-1] == 1:
        t = t.reshape(t.shape[:-1])
    check_sparse_shape(y_true, t, y_pred)
    if t.dtype != np.int64:
        t = t.astype(np.int64)
    cols = y_pred.shape[-1]
    if t.size and (t.min() < 0 or t.max() >= cols):
        raise ValueError(
            f"`sparse_categorical_crossentropy`: labels must be in [0, {cols}) for an output "
            f"with {cols} classes; received labels in [{t.min()}, {t.max()}]."
        )
    return np.ascontiguousarray(t)


class _SoftmaxCrossentropyFromLogits(_PerSample):
    """Softmax crossentropy over the last axis through the fused kernels `<kernel>_forward` /
    `<kernel>_backward`; subclasses turn y_true into the kernel's targets (rows first)."""

    kernel = None

    @abc.abstractmethod
    def targets(self, y_true, y_pred, rows, cols):
        """y_true as the fused kernel's targets, rows first."""

    device_native = True

    def values_forward(self, dev, y_true, y_pred):
        x2, cols = _rows(dev.contiguous(y_pred))
        rows = x2.shape[0]
        t = self.targets(y_true, y_pred, rows, cols)
        loss, probs = dev.empty((rows,)), dev.empty((rows, cols))
        dev.kernels[self.kernel + "_forward"](loss, probs, x2, t, rows, cols)
        return loss.reshape(y_pred.shape[:-1]), (probs, t, y_pred.shape, x2)

    def values_backward(self, dev, saved, g, needs, **attrs):
        probs, t, shape, x2 = saved
        rows, cols = probs.shape
        dx = dev.empty((rows, cols))
        g = dev.asarray(g) if not dev.is_host else np.asarray(g, dtype=probs.dtype)
        dev.kernels[self.kernel + "_backward"](dx, dev.contiguous(g.reshape(rows)), probs, t,
                                               rows, cols)
        dt = self.targets_grad(dev, g, x2, shape) if needs[0] else None
        return dt, dx.reshape(shape)

    def targets_grad(self, dev, g, x2, shape):
        """d loss / d y_true (float targets only)."""
        return None


class CategoricalCrossentropyFromLogits(_SoftmaxCrossentropyFromLogits):
    name = "loss_categorical_crossentropy_from_logits"
    kernel = "softmax_crossentropy"

    def targets(self, y_true, y_pred, rows, cols):
        check_same_shape(y_true.shape, y_pred.shape, "categorical_crossentropy")
        if type(y_true) is not np.ndarray:  # a device buffer (no cast kernel: int on the host)
            t = y_true if y_true.dtype == np.float32 else devices.device_of(y_true).asarray(
                devices.host_value(y_true).astype(np.float32))
            return t.reshape(rows, cols)
        t = np.ascontiguousarray(_as_float(y_true, y_pred))
        return t.reshape(rows, cols)

    def targets_grad(self, dev, g, x2, shape):
        # -log_softmax(x) * g, computed on the host in float64 (a y_true gradient is rare)
        x = devices.host_value(x2).astype(np.float64)
        z = x - x.max(axis=-1, keepdims=True)
        log_softmax = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
        dt = -log_softmax * devices.host_value(g).reshape(-1, 1)
        dt = dt.astype(x2.dtype).reshape(shape)
        return dt if dev.is_host else dev.asarray(dt)


class SparseCategoricalCrossentropyFromLogits(_SoftmaxCrossentropyFromLogits):
    name = "loss_sparse_categorical_crossentropy_from_logits"
    kernel = "sparse_softmax_crossentropy"

    def targets(self, y_true, y_pred, rows, cols):
        if type(y_true) is np.ndarray:
            return sparse_labels(y_true, y_pred).reshape(rows)
        if y_true.dtype != np.int64:  # no cast kernel on the device: converted on the host
            t = sparse_labels(devices.host_value(y_true), y_pred).reshape(rows)
            return devices.device_of(y_true).asarray(t)
        # int64 labels on the device: shapes checked here, values by the kernel (no copy back)
        t = y_true.reshape(y_true.shape[:-1]) if y_true.ndim == y_pred.ndim and \
            y_true.shape[-1] == 1 else y_true
        check_sparse_shape(y_true, t, y_pred)
        return t.reshape(rows)


class CosineSimilarity(_PerSample):
    """-sum(l2_normalize(t) * l2_normalize(p)) over the last axis (Keras's normalize)."""

    name = "loss_cosine_similarity"

    def values_forward(self, dev, y_true, y_pred):
        t = _as_float(match_ranks(y_true, y_pred), y_pred)
        check_same_shape(t.shape, y_pred.shape, "cosine_similarity")
        tsq = (t * t).sum(axis=-1, keepdims=True)
        rt = 1.0 / np.sqrt(np.maximum(tsq, 1e-12))
        tn = t * rt
        sq = (y_pred * y_pred).sum(axis=-1, keepdims=True)
        r = 1.0 / np.sqrt(np.maximum(sq, 1e-12))
        pn = y_pred * r
        out = -(tn * pn).sum(axis=-1)
        return np.asarray(out, dtype=y_pred.dtype), (
            (tn, r, sq >= 1e-12), (pn, rt, tsq >= 1e-12), y_true.shape)

    def values_backward(self, dev, saved, g, needs, **attrs):
        (tn, r, unclamped), (pn, rt, t_unclamped), t_shape = saved
        gcol = -np.asarray(g)[..., None]
        dp = _normalize_backward(gcol * tn, pn, r, unclamped)
        dt = None
        if needs[0]:  # the same formula with the roles exchanged
            dt = _normalize_backward(gcol * pn, tn, rt, t_unclamped)
            dt = dt.astype(pn.dtype, copy=False).reshape(t_shape)
        return dt, dp.astype(pn.dtype, copy=False)


def _normalize_backward(gn, xn, r, unclamped):
    """d loss / d x for xn = x * r, r = 1 / sqrt(max(sum(x^2), 1e-12)), given gn = d/d xn."""
    return r * (gn - unclamped * xn * (gn * xn).sum(axis=-1, keepdims=True))


class CategoricalHinge(_PerSample):
    """max(max((1 - t) p) - sum(t p) + 1, 0)."""

    name = "loss_categorical_hinge"

    def values_forward(self, dev, y_true, y_pred):
        t = _as_float(y_true, y_pred)
        check_same_shape(t.shape, y_pred.shape, "categorical_hinge")
        pos = (t * y_pred).sum(axis=-1)
        negv = (1.0 - t) * y_pred
        arg = negv.argmax(axis=-1)
        neg = np.take_along_axis(negv, arg[..., None], axis=-1)[..., 0]
        out = np.maximum(neg - pos + 1.0, 0.0)
        return np.asarray(out, dtype=y_pred.dtype), (t, arg, out > 0, y_pred)

    def values_backward(self, dev, saved, g, needs, **attrs):
        t, arg, active, p = saved
        ga = np.asarray(g) * active
        dp = -t * ga[..., None]
        onehot = np.zeros_like(t)
        np.put_along_axis(onehot, arg[..., None], 1.0, axis=-1)
        dp += onehot * (1.0 - t) * ga[..., None]
        dt = -(p + onehot * p) * ga[..., None] if needs[0] else None  # d/dt of -sum(t p), max
        return dt, dp


# ---- weighted reduction ----

REDUCTIONS = ("sum_over_batch_size", "sum", "mean", "mean_with_sample_weight", "none", None)


class ReduceWeighted(Op):
    """sum(values * w) / divisor: the size of values * w (sum_over_batch_size, mean), 1 (sum)
    or sum(w) (mean_with_sample_weight); reduction 'none' returns values * w. The weight meets
    the values as in Keras: a trailing 1 dropped or added where the ranks differ by one, then
    broadcast both ways (a scalar loss, Dice's or Tversky's over all axes, times per-sample
    weights gives per-sample values)."""

    name = "loss_reduce_weighted"

    def output_spec(self, values, sample_weight=None, reduction="sum_over_batch_size"):
        if reduction not in ("none", None):
            return ()
        if sample_weight is None:
            return su.shape_of(values)
        v, w = su.same_rank_shapes(su.shape_of(values), su.shape_of(sample_weight))
        return su.broadcast_shapes(v, w, "loss reduction")

    def forward(self, dev, values, sample_weight=None, reduction="sum_over_batch_size"):
        w = None
        vshape = vs = values.shape
        weighted = values
        if sample_weight is not None:
            w = np.asarray(sample_weight, dtype=values.dtype)
            vs, ws = su.same_rank_shapes(values.shape, w.shape)
            w = w.reshape(ws)
            weighted = values.reshape(vs) * w
        if reduction in ("none", None) or weighted.ndim == 0 or weighted.shape == (0,):
            return np.array(weighted, dtype=values.dtype), (w, None, vshape, vs, weighted.shape)
        total = weighted.sum()
        if reduction == "sum":
            divisor = 1.0
        elif reduction == "mean_with_sample_weight" and w is not None:
            divisor = float(w.sum())
        else:
            divisor = float(weighted.size)
        out = total / divisor if divisor else total * 0.0
        return np.asarray(out, dtype=values.dtype), (w, divisor, vshape, vs, weighted.shape)

    def backward(self, dev, saved, g, needs, sample_weight=None, reduction=None):
        w, divisor, vshape, vs, wshape = saved
        if divisor is None:
            gv = np.asarray(g).reshape(wshape)
        else:
            scale = (1.0 / divisor) if divisor else 0.0
            gv = np.full(wshape, float(g) * scale, dtype=np.asarray(g).dtype)
        if w is not None:
            gv = gv * w
        return su.unbroadcast(gv, vs).reshape(vshape), None
