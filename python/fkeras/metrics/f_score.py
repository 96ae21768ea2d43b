"""FBetaScore and F1Score (Keras 3): per-class (or micro) counts of thresholded predictions.

Without `threshold` a prediction is positive where it equals its row's maximum and is nonzero
(ties all count, as Keras); with one, where it is greater than the threshold.
"""

import numpy as np

from fkeras import config as _config
from fkeras.metrics.metric import Metric, to_numpy

_AVERAGES = (None, "micro", "macro", "weighted")


class FBetaScore(Metric):
    """F-beta score: `(1 + beta^2) * precision * recall / (beta^2 * precision + recall)`.

    Args:
        average: None (one score per class), "micro" (global counts), "macro" (mean of the
            per-class scores) or "weighted" (their mean weighted by each class's support).
        beta: a positive Python float weighing recall against precision.
        threshold: a float in (0, 1], or None (the row's maximum counts as positive).
        name, dtype: as every metric.
    """

    _direction = "up"

    def __init__(self, average=None, beta=1.0, threshold=None, name="fbeta_score",
                 dtype=None):
        super().__init__(name=name, dtype=dtype)
        if average not in _AVERAGES:
            raise ValueError("Invalid `average` argument value. Expected one of: "
                             f"{{None, 'micro', 'macro', 'weighted'}}. Received: "
                             f"average={average}")
        if not isinstance(beta, float):
            raise ValueError("Invalid `beta` argument value. It should be a Python float. "
                             f"Received: beta={beta} of type '{type(beta)}'")
        if beta <= 0.0:
            raise ValueError(f"Invalid `beta` argument value. It should be > 0. Received: "
                             f"beta={beta}")
        if threshold is not None:
            if not isinstance(threshold, float):
                raise ValueError("Invalid `threshold` argument value. It should be a Python "
                                 f"float. Received: threshold={threshold} of type "
                                 f"'{type(threshold)}'")
            if threshold > 1.0 or threshold <= 0.0:
                raise ValueError("Invalid `threshold` argument value. It should verify "
                                 f"0 < threshold <= 1. Received: threshold={threshold}")
        self.average, self.beta, self.threshold = average, beta, threshold
        self.axis = None if average == "micro" else 0
        self._built = False

    def _build(self, true_shape, pred_shape):
        if len(pred_shape) != 2 or len(true_shape) != 2:
            raise ValueError(f"{type(self).__name__} expects 2D inputs with shape "
                             "(batch_size, output_dim). Received input shapes: "
                             f"y_pred.shape={pred_shape} and y_true.shape={true_shape}.")
        shape = () if self.average == "micro" else (pred_shape[-1],)
        self.true_positives = self._add_state(shape, name="true_positives")
        self.false_positives = self._add_state(shape, name="false_positives")
        self.false_negatives = self._add_state(shape, name="false_negatives")
        self.intermediate_weights = self._add_state(shape, name="intermediate_weights")
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = to_numpy(y_true).astype(np.float64)
        y_pred = to_numpy(y_pred).astype(np.float64)
        if not self._built:
            self._build(y_true.shape, y_pred.shape)
        if self.threshold is None:
            pred = (y_pred >= y_pred.max(axis=-1, keepdims=True)) & (np.abs(y_pred) > 1e-9)
        else:
            pred = y_pred > self.threshold
        pred = pred.astype(np.float64)
        w = None if sample_weight is None else to_numpy(sample_weight).astype(
            np.float64).reshape(-1, 1)

        def total(v):
            return (v if w is None else v * w).sum(axis=self.axis)

        self.true_positives += total(pred * y_true)
        self.false_positives += total(pred * (1 - y_true))
        self.false_negatives += total((1 - pred) * y_true)
        self.intermediate_weights += total(y_true)

    def result(self):
        if not self._built:
            return np.float32(0.0)
        eps = _config.epsilon()
        tp = self.true_positives
        precision = tp / (tp + self.false_positives + eps)
        recall = tp / (tp + self.false_negatives + eps)
        b2 = self.beta ** 2
        score = precision * recall / (b2 * precision + recall + eps) * (1 + b2)
        if self.average == "weighted":
            weights = self.intermediate_weights / (self.intermediate_weights.sum() + eps)
            score = (score * weights).sum()
        elif self.average is not None:
            score = np.mean(score)
        return np.asarray(score, np.float32)

    def reset_state(self):
        if self._built:
            super().reset_state()

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype, "beta": self.beta,
                "average": self.average, "threshold": self.threshold}


class F1Score(FBetaScore):
    """F-1 score: the harmonic mean of precision and recall (FBetaScore with beta = 1)."""

    def __init__(self, average=None, threshold=None, name="f1_score", dtype=None):
        super().__init__(average=average, beta=1.0, threshold=threshold, name=name,
                         dtype=dtype)

    def get_config(self):
        config = super().get_config()
        del config["beta"]
        return config
