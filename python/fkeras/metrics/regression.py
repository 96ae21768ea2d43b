"""Regression, probabilistic and hinge metrics: the mean of a loss function over samples."""

import inspect

import numpy as np

from fkeras import losses
from fkeras.engine import tape as _tape
from fkeras.metrics.metric import Mean, MeanMetricWrapper, reduce_to_samplewise, to_numpy


def _no_tape(fn, direction="down"):
    """A loss function evaluated as a metric: outside any tape, returning NumPy."""

    def metric_fn(*args, **kwargs):
        with _tape.stop_recording():
            return np.asarray(fn(*args, **kwargs))

    # The loss function checks the arguments; its signature (Keras's) is the metric's.
    metric_fn.__signature__ = inspect.signature(fn)
    metric_fn.__name__ = fn.__name__
    metric_fn.__doc__ = fn.__doc__
    metric_fn._direction = direction
    return metric_fn


def _wrapper(cls_name, fn, default_name, direction="down", fn_kwargs=()):
    metric_fn = _no_tape(fn, direction)

    def __init__(self, name=default_name, dtype=None, **kwargs):
        extra = {k: kwargs.pop(k, v) for k, v in fn_kwargs}
        if kwargs:
            raise TypeError(f"{cls_name}: unexpected arguments {sorted(kwargs)}")
        MeanMetricWrapper.__init__(self, metric_fn, name=name, dtype=dtype, **extra)

    doc = f"The mean of `{fn.__name__}` over all samples seen."
    return type(cls_name, (MeanMetricWrapper,), {"__init__": __init__, "__doc__": doc,
                                                  "_direction": direction})


MeanSquaredError = _wrapper("MeanSquaredError", losses.mean_squared_error,
                            "mean_squared_error")
MeanAbsoluteError = _wrapper("MeanAbsoluteError", losses.mean_absolute_error,
                             "mean_absolute_error")
MeanAbsolutePercentageError = _wrapper("MeanAbsolutePercentageError",
                                       losses.mean_absolute_percentage_error,
                                       "mean_absolute_percentage_error")
MeanSquaredLogarithmicError = _wrapper("MeanSquaredLogarithmicError",
                                       losses.mean_squared_logarithmic_error,
                                       "mean_squared_logarithmic_error")
LogCoshError = _wrapper("LogCoshError", losses.log_cosh, "logcosh")
CosineSimilarity = _wrapper("CosineSimilarity",
                            lambda t, p, axis=-1: -np.asarray(losses.cosine_similarity(t, p, axis)),
                            "cosine_similarity", "up", (("axis", -1),))
Hinge = _wrapper("Hinge", losses.hinge, "hinge")
SquaredHinge = _wrapper("SquaredHinge", losses.squared_hinge, "squared_hinge")
CategoricalHinge = _wrapper("CategoricalHinge", losses.categorical_hinge, "categorical_hinge")
KLDivergence = _wrapper("KLDivergence", losses.kl_divergence, "kl_divergence")
Poisson = _wrapper("Poisson", losses.poisson, "poisson")
BinaryCrossentropy = _wrapper("BinaryCrossentropy", losses.binary_crossentropy,
                              "binary_crossentropy", "down",
                              (("from_logits", False), ("label_smoothing", 0.0)))
CategoricalCrossentropy = _wrapper("CategoricalCrossentropy", losses.categorical_crossentropy,
                                   "categorical_crossentropy", "down",
                                   (("from_logits", False), ("label_smoothing", 0.0),
                                    ("axis", -1)))
SparseCategoricalCrossentropy = _wrapper("SparseCategoricalCrossentropy",
                                         losses.sparse_categorical_crossentropy,
                                         "sparse_categorical_crossentropy", "down",
                                         (("from_logits", False), ("axis", -1)))


class RootMeanSquaredError(Mean):
    """sqrt(mean of squared errors) over everything seen."""

    _direction = "down"

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = to_numpy(y_true), to_numpy(y_pred)
        from fkeras.metrics.metric import squeeze_or_expand

        y_true, y_pred = squeeze_or_expand(y_true.astype(np.float64), y_pred)
        values, w = reduce_to_samplewise(np.square(y_pred - y_true), to_numpy(sample_weight))
        self.total += values.sum()
        self.count += values.shape[0] if w is None else np.sum(w)

    def result(self):
        count = float(self.count)
        return np.float32(np.sqrt(float(self.total) / count)) if count else np.float32(0.0)


# Metric functions (keras.metrics.*): per-sample NumPy values.
FUNCTIONS = {
    "mean_squared_error": _no_tape(losses.mean_squared_error),
    "mean_absolute_error": _no_tape(losses.mean_absolute_error),
    "mean_absolute_percentage_error": _no_tape(losses.mean_absolute_percentage_error),
    "mean_squared_logarithmic_error": _no_tape(losses.mean_squared_logarithmic_error),
    "log_cosh": _no_tape(losses.log_cosh),
    "hinge": _no_tape(losses.hinge),
    "squared_hinge": _no_tape(losses.squared_hinge),
    "categorical_hinge": _no_tape(losses.categorical_hinge),
    "kl_divergence": _no_tape(losses.kl_divergence),
    "poisson": _no_tape(losses.poisson),
    "binary_crossentropy": _no_tape(losses.binary_crossentropy),
    "categorical_crossentropy": _no_tape(losses.categorical_crossentropy),
    "sparse_categorical_crossentropy": _no_tape(losses.sparse_categorical_crossentropy),
    "binary_focal_crossentropy": _no_tape(losses.binary_focal_crossentropy),
    "categorical_focal_crossentropy": _no_tape(losses.categorical_focal_crossentropy),
    "huber": _no_tape(losses.huber),
}
