"""Goodness-of-fit metrics (Keras 3): PearsonCorrelation and ConcordanceCorrelation (batch
means of a per-batch statistic over `axis`) and R2Score (accumulated sums)."""

import warnings

import numpy as np

from fkeras import config as _config
from fkeras.metrics.metric import MeanMetricWrapper, Metric, squeeze_or_expand, to_numpy


def _pair(y_true, y_pred):
    y_pred = to_numpy(y_pred).astype(np.float64)
    y_true = to_numpy(y_true).astype(np.float64)
    return squeeze_or_expand(y_true, y_pred)


def pearson_correlation(y_true, y_pred, axis=-1):
    """Pearson's correlation of `y_true` and `y_pred` along `axis` (population std)."""
    t, p = _pair(y_true, y_pred)
    t = t - t.mean(axis=axis, keepdims=True)
    p = p - p.mean(axis=axis, keepdims=True)
    t = t / t.std(axis=axis, keepdims=True)
    p = p / p.std(axis=axis, keepdims=True)
    return np.asarray((t * p).mean(axis=axis), np.float32)


def concordance_correlation(y_true, y_pred, axis=-1):
    """Lin's concordance correlation along `axis`, computed as Keras 3.15 does (its covariance
    term centres `y_true` on the mean of `y_pred`, which this keeps for equal numbers)."""
    t, p = _pair(y_true, y_pred)
    t_mean = t.mean(axis=axis, keepdims=True)
    p_mean = p.mean(axis=axis, keepdims=True)
    t_var = (t - t_mean).var(axis=axis, keepdims=True)
    p_var = (p - p_mean).var(axis=axis, keepdims=True)
    covar = (t - p_mean) * (p - p_mean)
    norm = t_var + p_var + np.square(t_mean - p_mean)
    return np.asarray((2 * covar / (norm + _config.epsilon())).mean(axis=axis), np.float32)


class _Correlation(MeanMetricWrapper):
    _direction = "up"
    _statistic = None

    def __init__(self, name=None, dtype=None, axis=-1):
        super().__init__(type(self)._statistic, name=name, dtype=dtype, axis=axis)
        self.axis = axis

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype, "axis": self.axis}


class PearsonCorrelation(_Correlation):
    """The mean over batches of `pearson_correlation`."""

    _statistic = staticmethod(pearson_correlation)

    def __init__(self, name="pearson_correlation", dtype=None, axis=-1):
        super().__init__(name=name, dtype=dtype, axis=axis)


class ConcordanceCorrelation(_Correlation):
    """The mean over batches of `concordance_correlation`."""

    _statistic = staticmethod(concordance_correlation)

    def __init__(self, name="concordance_correlation", dtype=None, axis=-1):
        super().__init__(name=name, dtype=dtype, axis=axis)


class R2Score(Metric):
    """Coefficient of determination over everything seen, per output column.

    Args:
        class_aggregation: "uniform_average" (default), "variance_weighted_average" or None
            (one score per column).
        num_regressors: for the adjusted R2 (0: plain R2).
    """

    _direction = "up"
    _AGGREGATIONS = (None, "uniform_average", "variance_weighted_average")

    def __init__(self, class_aggregation="uniform_average", num_regressors=0, name="r2_score",
                 dtype=None):
        super().__init__(name=name, dtype=dtype)
        if class_aggregation not in self._AGGREGATIONS:
            raise ValueError("Invalid value for argument `class_aggregation`. Expected one of "
                             f"{self._AGGREGATIONS}. Received: "
                             f"class_aggregation={class_aggregation}")
        if num_regressors < 0:
            raise ValueError("Invalid value for argument `num_regressors`. Expected a value "
                             f">= 0. Received: num_regressors={num_regressors}")
        self.class_aggregation = class_aggregation
        self.num_regressors = num_regressors
        self.num_samples = self._add_state((), name="num_samples")
        self._built = False

    def _build(self, true_shape, pred_shape):
        if len(pred_shape) != 2 or len(true_shape) != 2:
            raise ValueError("R2Score expects 2D inputs with shape (batch_size, output_dim). "
                             f"Received input shapes: y_pred.shape={pred_shape} and "
                             f"y_true.shape={true_shape}.")
        n = pred_shape[-1]
        self.squared_sum = self._add_state((n,), name="squared_sum")
        self.sum = self._add_state((n,), name="sum")
        self.total_mse = self._add_state((n,), name="residual")
        self.count = self._add_state((n,), name="count")
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        t, p = _pair(y_true, y_pred)
        if not self._built:
            self._build(t.shape, p.shape)
        w = np.ones(()) if sample_weight is None else to_numpy(sample_weight).astype(np.float64)
        if w.ndim == 1:
            w = w[:, None]
        w = np.broadcast_to(w, t.shape)
        self.sum += (t * w).sum(axis=0)
        self.squared_sum += (t * t * w).sum(axis=0)
        self.total_mse += ((t - p) ** 2 * w).sum(axis=0)
        self.count += w.sum(axis=0)
        self.num_samples += t.size

    def result(self):
        if not self._built:
            return np.float32(0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = self.sum / self.count
            total = self.squared_sum - self.sum * mean
            raw = 1 - self.total_mse / total
        raw = np.where(np.isinf(raw), 0.0, raw)
        if self.class_aggregation == "uniform_average":
            score = raw.mean()
        elif self.class_aggregation == "variance_weighted_average":
            score = (total * raw).sum() / total.sum()
        else:
            score = raw
        n, k = float(self.num_samples), self.num_regressors
        if k:
            if k > n - 1:
                warnings.warn("More independent predictors than datapoints in adjusted R2 "
                              "score. Falling back to standard R2 score.", stacklevel=2)
            elif k == n - 1:
                warnings.warn("Division by zero in Adjusted R2 score. Falling back to "
                              "standard R2 score.", stacklevel=2)
            else:
                score = 1 - (1 - score) * (n - 1) / (n - k - 1)
        return np.asarray(score, np.float32)

    def reset_state(self):
        super().reset_state()

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype,
                "class_aggregation": self.class_aggregation,
                "num_regressors": self.num_regressors}
