"""The Keras loss catalogue: per-sample functions (keras.losses.mean_squared_error, ...) and
their classes (keras.losses.MeanSquaredError, ...), with Keras 3 defaults and formulas."""

import numpy as np

from fkeras import config as _config
from fkeras import ops
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.losses.loss import (
    REDUCE_IN_OP as _REDUCE,
    LossFunctionWrapper,
    as_pred,
    as_tensor,
    reduce_weighted_values,
)
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import apply


def _eps():
    return _config.epsilon()


def _apply(op_name, *args, **attrs):
    return apply(_R[op_name], *args, reduce=_REDUCE.get(), **attrs)


def _class_axis_last(y_true, y_pred, axis):
    """Moves the class axis to the end (the loss ops reduce the last axis)."""
    if axis in (-1, None) or axis == len(y_pred.shape) - 1:
        return y_true, y_pred
    rank = len(y_pred.shape)
    axis %= rank
    perm = [i for i in range(rank) if i != axis] + [axis]
    return ops.transpose(y_true, perm), ops.transpose(y_pred, perm)


def _float_labels(y_true):
    t = as_tensor(y_true)
    if isinstance(t, np.ndarray) and t.dtype.kind != "f":
        t = t.astype(np.float64)
    return t


# ---- per-sample functions ----

def mean_squared_error(y_true, y_pred):
    """mean(square(y_true - y_pred), axis=-1)."""
    return _apply("loss_mean_squared_error", as_tensor(y_true), as_pred(y_pred))


def mean_absolute_error(y_true, y_pred):
    """mean(abs(y_true - y_pred), axis=-1)."""
    return _apply("loss_mean_absolute_error", as_tensor(y_true), as_pred(y_pred))


def mean_absolute_percentage_error(y_true, y_pred):
    """100 * mean(abs((y_true - y_pred) / max(abs(y_true), epsilon)), axis=-1)."""
    return _apply("loss_mean_absolute_percentage_error", as_tensor(y_true),
                 as_pred(y_pred), epsilon=_eps())


def mean_squared_logarithmic_error(y_true, y_pred):
    """mean(square(log(max(y_pred, eps) + 1) - log(max(y_true, eps) + 1)), axis=-1)."""
    return _apply("loss_mean_squared_logarithmic_error", as_tensor(y_true),
                 as_pred(y_pred), epsilon=_eps())


def huber(y_true, y_pred, delta=1.0):
    """0.5 e^2 where |e| <= delta, else delta (|e| - 0.5 delta); averaged over the last axis."""
    return _apply("loss_huber", as_tensor(y_true), as_pred(y_pred), delta=float(delta))


def log_cosh(y_true, y_pred):
    """mean(log(cosh(y_pred - y_true)), axis=-1)."""
    return _apply("loss_log_cosh", as_tensor(y_true), as_pred(y_pred))


def hinge(y_true, y_pred):
    """mean(maximum(1 - y_true * y_pred, 0), axis=-1); {0, 1} labels become {-1, 1}."""
    return _apply("loss_hinge", as_tensor(y_true), as_pred(y_pred))


def squared_hinge(y_true, y_pred):
    """mean(square(maximum(1 - y_true * y_pred, 0)), axis=-1)."""
    return _apply("loss_squared_hinge", as_tensor(y_true), as_pred(y_pred))


def categorical_hinge(y_true, y_pred):
    """maximum(max((1 - y_true) * y_pred) - sum(y_true * y_pred) + 1, 0)."""
    return _apply("loss_categorical_hinge", as_tensor(y_true), as_pred(y_pred))


def kl_divergence(y_true, y_pred):
    """sum(y_true * log(y_true / y_pred), axis=-1), both clipped to [epsilon, 1]."""
    return _apply("loss_kl_divergence", as_tensor(y_true), as_pred(y_pred),
                 epsilon=_eps())


def poisson(y_true, y_pred):
    """mean(y_pred - y_true * log(y_pred + epsilon), axis=-1)."""
    return _apply("loss_poisson", as_tensor(y_true), as_pred(y_pred), epsilon=_eps())


def cosine_similarity(y_true, y_pred, axis=-1):
    """-sum(l2_normalize(y_true) * l2_normalize(y_pred), axis)."""
    y_true, y_pred = _class_axis_last(as_tensor(y_true), as_pred(y_pred), axis)
    return _apply("loss_cosine_similarity", y_true, y_pred)


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Binary crossentropy averaged over the last axis; labels smoothed towards 0.5."""
    t = _float_labels(y_true)
    if label_smoothing:
        t = ops.add(ops.multiply(t, 1.0 - label_smoothing), 0.5 * label_smoothing)
    y_pred = as_pred(y_pred)
    t, y_pred = _class_axis_last(t, y_pred, axis)
    if from_logits:
        return _apply("loss_binary_crossentropy_from_logits", t, y_pred)
    return _apply("loss_binary_crossentropy", t, y_pred, epsilon=_eps())


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """-sum(y_true * log(softmax or normalized y_pred)) over the class axis."""
    t = _float_labels(y_true)
    y_pred = as_pred(y_pred)
    if label_smoothing:
        t = ops.add(ops.multiply(t, 1.0 - label_smoothing),
                    label_smoothing / y_pred.shape[axis])
    t, y_pred = _class_axis_last(t, y_pred, axis)
    if from_logits:
        return _apply("loss_categorical_crossentropy_from_logits", t, y_pred)
    return _apply("loss_categorical_crossentropy", t, y_pred, epsilon=_eps())


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None,
                                    axis=-1):
    """Crossentropy with integer labels (shape (N,) or (N, 1)); ignore_class gives 0 loss."""
    t = as_tensor(y_true)
    y_pred = as_pred(y_pred)
    if axis not in (-1, None) and axis != len(y_pred.shape) - 1:
        rank = len(y_pred.shape)
        perm = [i for i in range(rank) if i != axis % rank] + [axis % rank]
        y_pred = ops.transpose(y_pred, perm)
    mask = None
    if ignore_class is not None and not isinstance(t, KerasTensor):
        mask = np.asarray(t) != ignore_class
        t = np.where(mask, t, 0).astype(np.int64)
    op = "loss_sparse_categorical_crossentropy" + ("_from_logits" if from_logits else "")
    attrs = {} if from_logits else {"epsilon": _eps()}
    if mask is None:
        return _apply(op, t, y_pred, **attrs)
    values = apply(_R[op], t, y_pred, **attrs)
    return ops.multiply(values, mask.reshape(values.shape).astype(values.dtype))


# ---- classes ----

class MeanSquaredError(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_error", dtype=None):
        super().__init__(mean_squared_error, reduction=reduction, name=name, dtype=dtype)


class MeanAbsoluteError(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_error", dtype=None):
        super().__init__(mean_absolute_error, reduction=reduction, name=name, dtype=dtype)


class MeanAbsolutePercentageError(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size",
                 name="mean_absolute_percentage_error", dtype=None):
        super().__init__(mean_absolute_percentage_error, reduction=reduction, name=name,
                         dtype=dtype)


class MeanSquaredLogarithmicError(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size",
                 name="mean_squared_logarithmic_error", dtype=None):
        super().__init__(mean_squared_logarithmic_error, reduction=reduction, name=name,
                         dtype=dtype)


class Huber(LossFunctionWrapper):
    def __init__(self, delta=1.0, reduction="sum_over_batch_size", name="huber_loss",
                 dtype=None):
        super().__init__(huber, reduction=reduction, name=name, dtype=dtype, delta=delta)


class LogCosh(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="log_cosh", dtype=None):
        super().__init__(log_cosh, reduction=reduction, name=name, dtype=dtype)


class Hinge(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="hinge", dtype=None):
        super().__init__(hinge, reduction=reduction, name=name, dtype=dtype)


class SquaredHinge(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="squared_hinge", dtype=None):
        super().__init__(squared_hinge, reduction=reduction, name=name, dtype=dtype)


class CategoricalHinge(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="categorical_hinge", dtype=None):
        super().__init__(categorical_hinge, reduction=reduction, name=name, dtype=dtype)


class KLDivergence(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="kl_divergence", dtype=None):
        super().__init__(kl_divergence, reduction=reduction, name=name, dtype=dtype)


class Poisson(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="poisson", dtype=None):
        super().__init__(poisson, reduction=reduction, name=name, dtype=dtype)


class CosineSimilarity(LossFunctionWrapper):
    def __init__(self, axis=-1, reduction="sum_over_batch_size", name="cosine_similarity",
                 dtype=None):
        super().__init__(cosine_similarity, reduction=reduction, name=name, dtype=dtype,
                         axis=axis)


class _Crossentropy(LossFunctionWrapper):
    """Shared by the three crossentropies: `from_logits` and the logits variant."""

    def logits_variant(self):
        if self._fn_kwargs.get("from_logits") or self._fn_kwargs.get("axis", -1) != -1:
            return None
        config = self.get_config()
        config["from_logits"] = True
        return type(self).from_config(config)

    @property
    def from_logits(self):
        return self._fn_kwargs["from_logits"]


class BinaryCrossentropy(_Crossentropy):
    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="binary_crossentropy", dtype=None):
        super().__init__(binary_crossentropy, reduction=reduction, name=name, dtype=dtype,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)


class CategoricalCrossentropy(_Crossentropy):
    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="categorical_crossentropy", dtype=None):
        super().__init__(categorical_crossentropy, reduction=reduction, name=name, dtype=dtype,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)


class SparseCategoricalCrossentropy(_Crossentropy):
    def __init__(self, from_logits=False, ignore_class=None, reduction="sum_over_batch_size",
                 name="sparse_categorical_crossentropy", dtype=None, axis=-1):
        super().__init__(sparse_categorical_crossentropy, reduction=reduction, name=name,
                         dtype=dtype, from_logits=from_logits, ignore_class=ignore_class,
                         axis=axis)

    def __call__(self, y_true, y_pred, sample_weight=None):
        ignore = self._fn_kwargs.get("ignore_class")
        if ignore is None or isinstance(y_true, KerasTensor):
            return super().__call__(y_true, y_pred, sample_weight)
        # Ignored entries weigh 0 and the mean runs over the valid ones (Keras's mask rule).
        labels = np.asarray(as_tensor(y_true))
        if labels.ndim == len(y_pred.shape) and labels.shape[-1] == 1:
            labels = labels.reshape(labels.shape[:-1])
        valid = (labels != ignore).astype(np.float64)
        if self.reduction in ("sum_over_batch_size", "mean") and valid.sum() > 0:
            valid *= valid.size / valid.sum()
        weight = valid if sample_weight is None else valid * np.asarray(sample_weight)
        values = self.call(as_tensor(y_true), as_pred(y_pred))
        return reduce_weighted_values(values, weight, self.reduction)


FUNCTIONS = {f.__name__: f for f in (
    mean_squared_error, mean_absolute_error, mean_absolute_percentage_error,
    mean_squared_logarithmic_error, huber, log_cosh, hinge, squared_hinge, categorical_hinge,
    kl_divergence, poisson, cosine_similarity, binary_crossentropy, categorical_crossentropy,
    sparse_categorical_crossentropy)}

CLASSES = {c.__name__: c for c in (
    MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError, Huber, LogCosh, Hinge, SquaredHinge, CategoricalHinge,
    KLDivergence, Poisson, CosineSimilarity, BinaryCrossentropy, CategoricalCrossentropy,
    SparseCategoricalCrossentropy)}

for _fn in FUNCTIONS.values():
    _fn._fk_reduce_in_op = True  # honours REDUCE_IN_OP (see LossFunctionWrapper.__call__)

# Function -> class, so compile() turns a function into a Loss that can use the logits path.
CLASS_OF_FUNCTION = {
    mean_squared_error: MeanSquaredError, mean_absolute_error: MeanAbsoluteError,
    mean_absolute_percentage_error: MeanAbsolutePercentageError,
    mean_squared_logarithmic_error: MeanSquaredLogarithmicError, huber: Huber,
    log_cosh: LogCosh, hinge: Hinge, squared_hinge: SquaredHinge,
    categorical_hinge: CategoricalHinge, kl_divergence: KLDivergence, poisson: Poisson,
    cosine_similarity: CosineSimilarity, binary_crossentropy: BinaryCrossentropy,
    categorical_crossentropy: CategoricalCrossentropy,
    sparse_categorical_crossentropy: SparseCategoricalCrossentropy,
}

ALIASES = {
    "mse": mean_squared_error, "MSE": mean_squared_error,
    "mae": mean_absolute_error, "MAE": mean_absolute_error,
    "mape": mean_absolute_percentage_error, "MAPE": mean_absolute_percentage_error,
    "msle": mean_squared_logarithmic_error, "MSLE": mean_squared_logarithmic_error,
    "kld": kl_divergence, "KLD": kl_divergence, "kullback_leibler_divergence": kl_divergence,
    "bce": binary_crossentropy, "BCE": binary_crossentropy,
    "logcosh": log_cosh, "huber_loss": huber,
}
