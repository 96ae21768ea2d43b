"""Losses composed of differentiable ops (their gradients come from the ops' backwards;
written with `ops.*` calls, never Python operators, because inside `fit` they run on bare
buffers in array mode):
focal crossentropies, Dice, Tversky, Circle and the generalized crossentropy, with Keras 3.15's
formulas, defaults and config keys."""

import warnings

import numpy as np

from fkeras import config as _config
from fkeras import ops
from fkeras.engine.masking import apply_mask, get_keras_mask
from fkeras.losses.loss import Loss, LossFunctionWrapper, as_pred, as_tensor, \
    reduce_weighted_values


def _check_axis(axis):
    if isinstance(axis, bool):
        raise ValueError(f"`axis` must be of type `int`. Received: axis={axis} of type "
                         f"{type(axis)}")


# ---- functions (per-sample values) ----

def binary_focal_crossentropy(y_true, y_pred, apply_class_balancing=False, alpha=0.25,
                              gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1):
    """Focal binary crossentropy (Lin et al. 2017): `mean((1 - p_t)^gamma * bce, axis)`, with
    `p_t = y p + (1 - y)(1 - p)`; with class balancing each term is weighted by
    `alpha` for positives and `1 - alpha` for negatives."""
    y_pred = as_pred(y_pred)
    y_true = ops.cast(as_tensor(y_true), y_pred.dtype)
    if label_smoothing:
        y_true = ops.add(ops.multiply(y_true, 1.0 - label_smoothing), 0.5 * label_smoothing)
    if from_logits:
        y_pred = ops.sigmoid(y_pred)
    bce = ops.binary_crossentropy(y_true, y_pred, from_logits=False)
    p_t = ops.add(ops.multiply(y_true, y_pred),
                  ops.multiply(ops.subtract(1.0, y_true), ops.subtract(1.0, y_pred)))
    focal = ops.multiply(ops.power(ops.subtract(1.0, p_t), gamma), bce)
    if apply_class_balancing:
        weight = ops.add(ops.multiply(y_true, alpha),
                         ops.multiply(ops.subtract(1.0, y_true), 1.0 - alpha))
        focal = ops.multiply(weight, focal)
    return ops.mean(focal, axis=axis)


def categorical_focal_crossentropy(y_true, y_pred, alpha=0.25, gamma=2.0, from_logits=False,
                                   label_smoothing=0.0, axis=-1):
    """Focal categorical crossentropy: `sum(alpha (1 - p)^gamma * -y log p, axis)` with the
    predictions renormalized along `axis` and clipped to [epsilon, 1 - epsilon]."""
    _check_axis(axis)
    y_pred = as_pred(y_pred)
    y_true = ops.cast(as_tensor(y_true), y_pred.dtype)
    if y_pred.shape[-1] == 1:
        warnings.warn(
            "In loss categorical_focal_crossentropy, expected y_pred.shape to be "
            f"(batch_size, num_classes) with num_classes > 1. Received: "
            f"y_pred.shape={tuple(y_pred.shape)}. Consider using 'binary_crossentropy' if you "
            "only have 2 classes.", SyntaxWarning, stacklevel=2)
    if label_smoothing:
        n = float(y_true.shape[-1])
        y_true = ops.add(ops.multiply(y_true, 1.0 - label_smoothing), label_smoothing / n)
    if from_logits:
        y_pred = ops.softmax(y_pred, axis=axis)
    output = ops.divide(y_pred, ops.sum(y_pred, axis=axis, keepdims=True))
    eps = _config.epsilon()
    output = ops.clip(output, eps, 1.0 - eps)
    cce = ops.multiply(ops.negative(y_true), ops.log(output))
    weight = ops.multiply(ops.power(ops.subtract(1.0, output), gamma), alpha)
    return ops.sum(ops.multiply(weight, cce), axis=axis)


def dice(y_true, y_pred, axis=None):
    """`1 - 2 sum(y p) / (sum(y) + sum(p) + epsilon)`, reduced over `axis` (all axes when
    None, as Keras: one value for the batch)."""
    y_pred = as_pred(y_pred)
    y_true = ops.cast(as_tensor(y_true), y_pred.dtype)
    intersection = ops.sum(ops.multiply(y_true, y_pred), axis=axis)
    total = ops.add(ops.add(ops.sum(y_true, axis=axis), ops.sum(y_pred, axis=axis)),
                    _config.epsilon())
    return ops.subtract(1.0, ops.divide(ops.multiply(2.0, intersection), total))


def tversky(y_true, y_pred, alpha=0.5, beta=0.5, axis=None):
    """`1 - TP / (TP + alpha FP + beta FN + epsilon)` with soft counts over `axis`."""
    y_pred = as_pred(y_pred)
    y_true = ops.cast(as_tensor(y_true), y_pred.dtype)
    tp = ops.sum(ops.multiply(y_true, y_pred), axis=axis)
    # Keras's naming (its "fp" counts missed positives), kept for Keras's numbers
    fp = ops.sum(ops.multiply(ops.subtract(1.0, y_pred), y_true), axis=axis)
    fn = ops.sum(ops.multiply(y_pred, ops.subtract(1.0, y_true)), axis=axis)
    denominator = ops.add(ops.add(ops.add(tp, ops.multiply(fp, alpha)),
                                  ops.multiply(fn, beta)), _config.epsilon())
    return ops.subtract(1.0, ops.divide(tp, denominator))


def _pos_neg_masks(query_labels, key_labels, remove_diagonal):
    q = np.asarray(query_labels).reshape(-1, 1)
    k = np.asarray(key_labels).reshape(-1, 1)
    positive = q == k.T
    negative = ~positive
    if remove_diagonal:
        positive &= ~np.eye(q.size, k.size, dtype=bool)
    return positive, negative


def circle(y_true, y_pred, ref_labels=None, ref_embeddings=None, remove_diagonal=True,
           gamma=80, margin=0.4):
    """Circle loss (Sun et al. 2020) on L2-normalized embeddings `y_pred` with integer class
    labels `y_true`, against `ref_embeddings`/`ref_labels` (the batch itself by default).
    Rows whose positives or negatives are all masked contribute 0 (and their loss is masked
    out of the mean by `Circle`)."""
    y_pred = as_pred(y_pred)
    labels = np.asarray(as_tensor(y_true)).astype(np.int32)
    ref = y_pred if ref_embeddings is None else as_pred(ref_embeddings)
    ref_lab = labels if ref_labels is None else np.asarray(as_tensor(ref_labels)).astype(
        np.int32)
    distances = ops.maximum(ops.subtract(1.0, ops.matmul(y_pred, ops.transpose(ref))), 0.0)
    positive, negative = _pos_neg_masks(labels, ref_lab, remove_diagonal)
    pos_m = positive.astype(np.float32)
    neg_m = negative.astype(np.float32)
    pos_w = ops.maximum(ops.multiply(ops.add(distances, margin), pos_m), 0.0)
    neg_w = ops.maximum(ops.multiply(ops.subtract(1.0 + margin, distances), neg_m), 0.0)
    pos_wd = ops.multiply(ops.multiply(pos_w, -1.0 * gamma), ops.subtract(margin, distances))
    neg_wd = ops.multiply(ops.multiply(neg_w, gamma), ops.subtract(1.0 - margin, distances))
    p_loss = ops.logsumexp(ops.where(positive, pos_wd, float("-inf")), axis=1)
    n_loss = ops.logsumexp(ops.where(negative, neg_wd, float("-inf")), axis=1)
    return ops.softplus(ops.add(p_loss, n_loss))


def categorical_generalized_cross_entropy(y_true, y_pred, q):
    """Generalized crossentropy (Zhang & Sabuncu 2018): `(1 - p^q) / q` with `p` the predicted
    probability of the integer label `y_true`."""
    y_pred = as_pred(y_pred)
    labels = np.asarray(as_tensor(y_true)).astype(np.int64)
    one_hot = ops.one_hot(labels, y_pred.shape[-1], dtype=y_pred.dtype)
    p = ops.sum(ops.multiply(y_pred, one_hot), axis=-1)
    return ops.divide(ops.subtract(1.0, ops.power(p, q)), q)


# ---- classes ----

class BinaryFocalCrossentropy(LossFunctionWrapper):
    def __init__(self, apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False,
                 label_smoothing=0.0, axis=-1, reduction="sum_over_batch_size",
                 name="binary_focal_crossentropy", dtype=None):
        super().__init__(binary_focal_crossentropy, reduction=reduction, name=name,
                         dtype=dtype, apply_class_balancing=apply_class_balancing,
                         alpha=alpha, gamma=gamma, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)

    def get_config(self):
        kw = self._fn_kwargs
        return {**Loss.get_config(self), "from_logits": kw["from_logits"],
                "label_smoothing": kw["label_smoothing"], "axis": kw["axis"],
                "apply_class_balancing": kw["apply_class_balancing"], "alpha": kw["alpha"],
                "gamma": kw["gamma"]}


class CategoricalFocalCrossentropy(LossFunctionWrapper):
    def __init__(self, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="categorical_focal_crossentropy",
                 dtype=None):
        super().__init__(categorical_focal_crossentropy, reduction=reduction, name=name,
                         dtype=dtype, alpha=alpha, gamma=gamma, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)

    def get_config(self):
        kw = self._fn_kwargs
        return {**Loss.get_config(self), "from_logits": kw["from_logits"],
                "label_smoothing": kw["label_smoothing"], "axis": kw["axis"],
                "alpha": kw["alpha"], "gamma": kw["gamma"]}


class Dice(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="dice", axis=None, dtype=None):
        super().__init__(dice, reduction=reduction, name=name, dtype=dtype, axis=axis)


class Tversky(LossFunctionWrapper):
    def __init__(self, alpha=0.5, beta=0.5, reduction="sum_over_batch_size", name="tversky",
                 axis=None, dtype=None):
        super().__init__(tversky, reduction=reduction, name=name, dtype=dtype, alpha=alpha,
                         beta=beta, axis=axis)


class Circle(LossFunctionWrapper):
    def __init__(self, gamma=80.0, margin=0.4, remove_diagonal=True,
                 reduction="sum_over_batch_size", name="circle", dtype=None):
        super().__init__(circle, reduction=reduction, name=name, dtype=dtype, gamma=gamma,
                         margin=margin, remove_diagonal=remove_diagonal)

    def __call__(self, y_true, y_pred, sample_weight=None):
        # Keras masks the per-sample losses to the positive ones (mask: loss > 0) and combines
        # that mask with y_pred's; the mean then runs over the unmasked samples.
        values = self.call(as_tensor(y_true), as_pred(y_pred))
        mask = np.asarray(values) > 0
        in_mask = get_keras_mask(y_pred)
        if in_mask is not None:
            mask = mask & np.asarray(in_mask, dtype=bool)
        weight = apply_mask(sample_weight, mask, self.reduction)
        return reduce_weighted_values(values, weight, self.reduction)


class CategoricalGeneralizedCrossEntropy(LossFunctionWrapper):
    def __init__(self, q=0.5, reduction="sum_over_batch_size",
                 name="categorical_generalized_cross_entropy", dtype=None):
        if not 0 < q < 1:
            raise ValueError("q must be in the interval (0, 1)")
        super().__init__(categorical_generalized_cross_entropy, reduction=reduction,
                         name=name, dtype=dtype, q=q)


FUNCTIONS = (binary_focal_crossentropy, categorical_focal_crossentropy, dice, tversky, circle,
             categorical_generalized_cross_entropy)
CLASSES = (BinaryFocalCrossentropy, CategoricalFocalCrossentropy, Dice, Tversky, Circle,
           CategoricalGeneralizedCrossEntropy)


# ---- CTC ----

def ctc(y_true, y_pred):
    """CTC loss per sample with Keras 3's conventions: `y_true` (batch, max_length) integer
    labels padded with 0, which is also the blank class; `y_pred` (batch, time, classes)
    logits over full-length sequences."""
    if len(np.shape(y_true)) != 2:
        raise ValueError("Targets `y_true` are expected to be a tensor of shape "
                         "`(batch_size, max_length)` in integer format. "
                         f"Received: y_true.shape={tuple(np.shape(y_true))}")
    if len(y_pred.shape) != 3:
        raise ValueError("Logits `y_pred` are expected to be a tensor of shape "
                         "`(batch_size, max_length, num_classes)`. "
                         f"Received: y_pred.shape={tuple(y_pred.shape)}")
    labels = np.asarray(as_tensor(y_true)).astype(np.int32)
    batch, steps = y_pred.shape[0], y_pred.shape[1]
    input_length = np.full((batch,), steps, np.int32)
    label_length = (labels != 0).sum(axis=-1).astype(np.int32)
    return ops.ctc_loss(labels, as_pred(y_pred), label_length, input_length, mask_index=0)


class CTC(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="ctc", dtype=None):
        super().__init__(ctc, reduction=reduction, name=name, dtype=dtype)


FUNCTIONS = FUNCTIONS + (ctc,)
CLASSES = CLASSES + (CTC,)
