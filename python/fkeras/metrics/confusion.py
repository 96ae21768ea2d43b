"""Confusion-matrix metrics: TruePositives & co, Precision, Recall and AUC (Keras 3).

A prediction counts as positive when it is strictly greater than the threshold; a label is
positive when it is nonzero. Counts are weighted by sample_weight. The counts at many
thresholds come from one sort of the predictions (O(n log n)), not a thresholds x samples
comparison table.
"""

import numpy as np

from fkeras import config as _config
from fkeras.metrics.metric import Metric, squeeze_or_expand, to_numpy


def _aligned_inputs(y_true, y_pred, sample_weight, top_k=None, class_id=None,
                    label_weights=None):
    """(labels, predictions, weights), all shaped like the predictions, as Keras 3's
    update_confusion_matrix_variables aligns them: y_true to y_pred's rank, the sample weight
    given a trailing axis and then aligned to y_true (a (batch,) weight weighs each sample's
    every class), top_k / class_id applied (class_id keeps a trailing axis of 1), the weights
    broadcast to the predictions and times the label weights along the last axis."""
    y_true = to_numpy(y_true)
    y_pred = to_numpy(y_pred).astype(np.float64)
    y_pred, y_true = squeeze_or_expand(y_pred, y_true)
    w = None
    if sample_weight is not None:
        w = to_numpy(sample_weight).astype(np.float64)[..., None]
        w = squeeze_or_expand(y_true, w, expand_rank_1=False)[1]
    if top_k is not None:
        kth = -np.sort(-y_pred, axis=-1)[..., top_k - 1:top_k]
        y_pred = np.where(y_pred >= kth, y_pred, -np.inf)
    if class_id is not None:
        y_true, y_pred = y_true[..., class_id, None], y_pred[..., class_id, None]
    w = np.ones(y_pred.shape) if w is None else np.broadcast_to(w, y_pred.shape)
    if label_weights is not None:
        w = w * np.broadcast_to(label_weights, y_pred.shape)
    return y_true != 0, y_pred, np.asarray(w, np.float64)


def _flatten_inputs(y_true, y_pred, sample_weight, top_k=None, class_id=None,
                    label_weights=None):
    labels, preds, w = _aligned_inputs(y_true, y_pred, sample_weight, top_k, class_id,
                                       label_weights)
    return labels.reshape(-1), preds.reshape(-1), w.reshape(-1)


def confusion_counts(labels, preds, weights, thresholds):
    """(tp, fp, tn, fn) per threshold, each shaped like `thresholds`."""
    order = np.argsort(preds, kind="stable")
    p = preds[order]
    pos = np.concatenate([[0.0], np.cumsum(weights[order] * labels[order])])
    neg = np.concatenate([[0.0], np.cumsum(weights[order] * ~labels[order])])
    below = np.searchsorted(p, thresholds, side="right")  # predictions <= threshold
    fn, tn = pos[below], neg[below]
    return pos[-1] - fn, neg[-1] - tn, tn, fn


def _thresholds(thresholds, default=0.5):
    if thresholds is None:
        return np.array([default]), True
    scalar = np.ndim(thresholds) == 0
    return np.atleast_1d(np.asarray(thresholds, dtype=np.float64)), scalar


class _ConfusionMetric(Metric):
    _direction = "up"

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None,
                 default=0.5):
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds = thresholds
        self.top_k, self.class_id = top_k, class_id
        self.thresholds, self._scalar = _thresholds(thresholds, default)
        n = len(self.thresholds)
        self.true_positives = self._add_state((n,), name="true_positives")
        self.false_positives = self._add_state((n,), name="false_positives")
        self.true_negatives = self._add_state((n,), name="true_negatives")
        self.false_negatives = self._add_state((n,), name="false_negatives")

    def update_state(self, y_true, y_pred, sample_weight=None):
        labels, preds, w = _flatten_inputs(y_true, y_pred, sample_weight, self.top_k,
                                           self.class_id)
        tp, fp, tn, fn = confusion_counts(labels, preds, w, self.thresholds)
        self.true_positives += tp
        self.false_positives += fp
        self.true_negatives += tn
        self.false_negatives += fn

    def _out(self, values):
        values = np.asarray(values, dtype=np.float32)
        return values[0] if self._scalar else values

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype, "thresholds": self.init_thresholds}


def _ratio(a, b):
    return np.divide(a, b, out=np.zeros_like(a), where=b != 0)


class Precision(_ConfusionMetric):
    """tp / (tp + fp) at `thresholds` (default 0.5)."""

    def __init__(self, thresholds=None, top_k=None, class_id=None, name="precision",
                 dtype=None):
        super().__init__(thresholds, top_k, class_id, name, dtype,
                         default=-np.inf if top_k else 0.5)

    def result(self):
        return self._out(_ratio(self.true_positives, self.true_positives + self.false_positives))

    def get_config(self):
        return dict(super().get_config(), top_k=self.top_k, class_id=self.class_id)


class Recall(Precision):
    """tp / (tp + fn) at `thresholds` (default 0.5)."""

    def __init__(self, thresholds=None, top_k=None, class_id=None, name="recall", dtype=None):
        super().__init__(thresholds, top_k, class_id, name, dtype)  # Precision's defaults

    def result(self):
        return self._out(_ratio(self.true_positives, self.true_positives + self.false_negatives))


def _count_metric(cls_name, attr, default_name):
    def __init__(self, thresholds=None, name=default_name, dtype=None):
        _ConfusionMetric.__init__(self, thresholds, None, None, name, dtype)

    def result(self):
        return self._out(getattr(self, attr))

    return type(cls_name, (_ConfusionMetric,), {"__init__": __init__, "result": result,
                                                 "__doc__": f"Weighted count of {attr}."})


TruePositives = _count_metric("TruePositives", "true_positives", "true_positives")
FalsePositives = _count_metric("FalsePositives", "false_positives", "false_positives")
TrueNegatives = _count_metric("TrueNegatives", "true_negatives", "true_negatives")
FalseNegatives = _count_metric("FalseNegatives", "false_negatives", "false_negatives")


class AUC(Metric):
    """Area under the ROC or PR curve, from counts at `num_thresholds` thresholds.

    Args:
        num_thresholds: Defaults to 200 (evenly spaced in [0, 1], the ends widened by
            epsilon so that 0 and 1 fall inside).
        curve: "ROC" (default) or "PR".
        summation_method: "interpolation" (default; trapezoids for ROC, Davis & Goadrich for
            PR), "minoring" or "majoring".
        thresholds: explicit thresholds (overrides num_thresholds).
        from_logits: apply a sigmoid to the predictions first.
    """

    _direction = "up"

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation",
                 name="auc", dtype=None, thresholds=None, multi_label=False, num_labels=None,
                 label_weights=None, from_logits=False):
        super().__init__(name=name, dtype=dtype)
        if num_labels and not multi_label:
            raise ValueError("`num_labels` is needed only when `multi_label` is True.")
        self.multi_label = bool(multi_label)
        self.num_labels = num_labels
        self.label_weights = None if label_weights is None else np.asarray(label_weights,
                                                                             np.float64)
        if curve.upper() not in ("ROC", "PR"):
            raise ValueError(f'Invalid AUC curve value: "{curve}". Expected "ROC" or "PR".')
        self.curve = curve.upper()
        self.summation_method = summation_method.lower()
        self.from_logits = from_logits
        eps = _config.epsilon()
        if thresholds is not None:
            inner = sorted(float(t) for t in np.atleast_1d(thresholds))
            self._evenly = False
        else:
            if num_thresholds <= 1:
                raise ValueError("Argument `num_thresholds` must be an integer > 1. "
                                 f"Received: num_thresholds={num_thresholds}")
            inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
            self._evenly = True
        self.num_thresholds = len(inner) + 2
        self.thresholds = np.array([0.0 - eps] + inner + [1.0 + eps])
        self._built = False
        if not self.multi_label or num_labels:
            self._build_counts(num_labels if self.multi_label else None)

    def _build_counts(self, labels):
        """The counts: (num_thresholds,), or (num_thresholds, labels) with multi_label."""
        shape = (self.num_thresholds,) + ((labels,) if labels else ())
        self.true_positives = self._add_state(shape, name="true_positives")
        self.false_positives = self._add_state(shape, name="false_positives")
        self.true_negatives = self._add_state(shape, name="true_negatives")
        self.false_negatives = self._add_state(shape, name="false_negatives")
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = to_numpy(y_pred).astype(np.float64)
        if self.from_logits:
            y_pred = 1.0 / (1.0 + np.exp(-y_pred))
        if not self.multi_label:
            counts = confusion_counts(*self._clipped(*_flatten_inputs(
                y_true, y_pred, sample_weight, label_weights=self.label_weights)),
                self.thresholds)
        else:
            if y_pred.ndim != 2:
                raise ValueError("`y_pred` must have rank 2 when `multi_label=True`. Found "
                                 f"rank {y_pred.ndim}. Full shape received for `y_pred`: "
                                 f"{y_pred.shape}")
            if not self._built:
                self._build_counts(y_pred.shape[1])
            if y_pred.shape[1] != self.true_positives.shape[1]:
                raise ValueError(f"AUC(multi_label=True) was built for "
                                 f"{self.true_positives.shape[1]} labels, received y_pred of "
                                 f"shape {y_pred.shape}.")
            # One count per label; the label weights weigh the label AUCs in `result`.
            labels, preds, w = _aligned_inputs(y_true, y_pred, sample_weight)
            per_label = [confusion_counts(*self._clipped(labels[:, j], preds[:, j], w[:, j]),
                                          self.thresholds) for j in range(preds.shape[1])]
            counts = [np.stack(c, axis=-1) for c in zip(*per_label)]
        for state, c in zip((self.true_positives, self.false_positives, self.true_negatives,
                             self.false_negatives), counts):
            state += c

    def _clipped(self, labels, preds, w):
        return labels, (np.clip(preds, 0.0, 1.0) if self._evenly else preds), w

    def result(self):
        if not self._built:  # multi_label without num_labels, before any update
            return np.float32(0.0)
        tp, fp, tn, fn = (self.true_positives, self.false_positives, self.true_negatives,
                          self.false_negatives)
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self._average(self._interpolate_pr_auc())
        recall = _ratio(tp, tp + fn)
        if self.curve == "ROC":
            x, y = _ratio(fp, fp + tn), recall
        else:
            x, y = recall, _ratio(tp, tp + fp)
        if self.summation_method == "minoring":
            heights = np.minimum(y[:-1], y[1:])
        elif self.summation_method == "majoring":
            heights = np.maximum(y[:-1], y[1:])
        else:
            heights = (y[:-1] + y[1:]) / 2.0
        return self._average(np.sum((x[:-1] - x[1:]) * heights, axis=0))

    def _average(self, by_label):
        """The AUC, or with multi_label the mean of the label AUCs (weighted by label_weights,
        0 where they sum to 0)."""
        if not self.multi_label:
            return np.float32(by_label)
        if self.label_weights is None:
            return np.float32(np.mean(by_label))
        total = float(np.sum(self.label_weights))
        return np.float32(np.sum(by_label * self.label_weights) / total if total else 0.0)

    def _interpolate_pr_auc(self):
        tp, fp, fn = self.true_positives, self.false_positives, self.false_negatives
        dtp = tp[:-1] - tp[1:]
        p = tp + fp
        dp = p[:-1] - p[1:]
        slope = _ratio(dtp, np.maximum(dp, 0))
        intercept = tp[1:] - slope * p[1:]
        both = (p[:-1] > 0) & (p[1:] > 0)
        ratio = np.where(both, _ratio(p[:-1], np.maximum(p[1:], 0)), 1.0)
        ratio = np.where(ratio > 0, ratio, 1.0)
        num = slope * (dtp + intercept * np.log(ratio))
        return np.sum(_ratio(num, np.maximum(tp[1:] + fn[1:], 0)), axis=0)

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype, "num_thresholds": self.num_thresholds,
                "curve": self.curve, "summation_method": self.summation_method,
                "multi_label": self.multi_label, "num_labels": self.num_labels,
                "label_weights": None if self.label_weights is None
                else self.label_weights.tolist(),
                "from_logits": self.from_logits}


class _AtConstraint(Metric):
    """Counts at `num_thresholds` evenly spaced thresholds in [0, 1] (0.5 alone when 1), and
    the best value of one rate among the thresholds where another meets `value` (Keras 3's
    SensitivitySpecificityBase)."""

    _direction = "up"
    _value_arg = None  # the constructor argument holding the constraint
    _rates_used = None  # (the constrained rate, the maximised rate)

    def __init__(self, value, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        if value < 0 or value > 1:
            raise ValueError(f"Argument `{self._value_arg}` must be in the range [0, 1]. "
                             f"Received: {self._value_arg}={value}")
        if num_thresholds <= 0:
            raise ValueError("Argument `num_thresholds` must be an integer > 0. Received: "
                             f"num_thresholds={num_thresholds}")
        self.value, self.num_thresholds, self.class_id = value, num_thresholds, class_id
        setattr(self, self._value_arg, value)
        if num_thresholds == 1:
            self.thresholds, self._evenly = np.array([0.5]), False
        else:
            inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
            self.thresholds, self._evenly = np.array([0.0] + inner + [1.0]), True
        n = len(self.thresholds)
        self.true_positives = self._add_state((n,), name="true_positives")
        self.false_positives = self._add_state((n,), name="false_positives")
        self.true_negatives = self._add_state((n,), name="true_negatives")
        self.false_negatives = self._add_state((n,), name="false_negatives")

    def update_state(self, y_true, y_pred, sample_weight=None):
        labels, preds, w = _flatten_inputs(y_true, y_pred, sample_weight,
                                           class_id=self.class_id)
        if self._evenly:
            preds = np.clip(preds, 0.0, 1.0)
        tp, fp, tn, fn = confusion_counts(labels, preds, w, self.thresholds)
        self.true_positives += tp
        self.false_positives += fp
        self.true_negatives += tn
        self.false_negatives += fn

    def _rates(self):
        tp, fp, tn, fn = (self.true_positives, self.false_positives, self.true_negatives,
                          self.false_negatives)
        return {"sensitivity": _ratio(tp, tp + fn), "specificity": _ratio(tn, tn + fp),
                "precision": _ratio(tp, tp + fp)}

    def result(self):
        """The best `_rates_used[1]` among the thresholds where `_rates_used[0]` >= value."""
        constrained, dependent = self._rates_used
        rates = self._rates()
        feasible = rates[constrained] >= self.value
        return np.float32(np.max(np.where(feasible, rates[dependent], 0.0), initial=0.0))

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype, "num_thresholds": self.num_thresholds,
                "class_id": self.class_id, self._value_arg: self.value}


class SensitivityAtSpecificity(_AtConstraint):
    """The best sensitivity (recall) among thresholds whose specificity is >= `specificity`."""

    _value_arg = "specificity"
    _rates_used = ("specificity", "sensitivity")  # (constrained, maximised)

    def __init__(self, specificity, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(specificity, num_thresholds, class_id, name, dtype)


class SpecificityAtSensitivity(_AtConstraint):
    """The best specificity among thresholds whose sensitivity is >= `sensitivity`."""

    _value_arg = "sensitivity"
    _rates_used = ("sensitivity", "specificity")  # (constrained, maximised)

    def __init__(self, sensitivity, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(sensitivity, num_thresholds, class_id, name, dtype)


class PrecisionAtRecall(_AtConstraint):
    """The best precision among thresholds whose recall is >= `recall`."""

    _value_arg = "recall"
    _rates_used = ("sensitivity", "precision")  # (constrained, maximised)

    def __init__(self, recall, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(recall, num_thresholds, class_id, name, dtype)


class RecallAtPrecision(_AtConstraint):
    """The best recall among thresholds whose precision is >= `precision`."""

    _value_arg = "precision"
    _rates_used = ("precision", "sensitivity")  # (constrained, maximised)

    def __init__(self, precision, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(precision, num_thresholds, class_id, name, dtype)
