"""fkeras.metrics: stateful metrics (update_state / result / reset_state) and metric functions.

In `compile(metrics=[...])`, "accuracy"/"acc" and "crossentropy"/"ce" are resolved from the
shapes of the first batch the way Keras 3 does (fkeras/trainers/compile_metrics.py).
"""

from fkeras.metrics.accuracy import (
    Accuracy,
    BinaryAccuracy,
    CategoricalAccuracy,
    SparseCategoricalAccuracy,
    SparseTopKCategoricalAccuracy,
    TopKCategoricalAccuracy,
    accuracy,
    binary_accuracy,
    categorical_accuracy,
    sparse_categorical_accuracy,
    sparse_top_k_categorical_accuracy,
    top_k_categorical_accuracy,
)
from fkeras.metrics.confusion import (
    AUC,
    FalseNegatives,
    FalsePositives,
    Precision,
    Recall,
    TrueNegatives,
    TruePositives,
)
from fkeras.metrics.confusion import (
    PrecisionAtRecall,
    RecallAtPrecision,
    SensitivityAtSpecificity,
    SpecificityAtSensitivity,
)
from fkeras.metrics.correlation import (
    ConcordanceCorrelation,
    PearsonCorrelation,
    R2Score,
    concordance_correlation,
    pearson_correlation,
)
from fkeras.metrics.f_score import F1Score, FBetaScore
from fkeras.metrics.iou import BinaryIoU, IoU, MeanIoU, OneHotIoU, OneHotMeanIoU
from fkeras.metrics.metric import Mean, MeanMetricWrapper, Metric, Sum
from fkeras.metrics.regression import (
    FUNCTIONS as _LOSS_FUNCTIONS,
    BinaryCrossentropy,
    CategoricalCrossentropy,
    CategoricalHinge,
    CosineSimilarity,
    Hinge,
    KLDivergence,
    LogCoshError,
    MeanAbsoluteError,
    MeanAbsolutePercentageError,
    MeanSquaredError,
    MeanSquaredLogarithmicError,
    Poisson,
    RootMeanSquaredError,
    SparseCategoricalCrossentropy,
    SquaredHinge,
)

globals().update(_LOSS_FUNCTIONS)  # keras.metrics.mean_squared_error, ...

CLASSES = {c.__name__: c for c in (
    Metric, Mean, Sum, MeanMetricWrapper, Accuracy, BinaryAccuracy, CategoricalAccuracy,
    SparseCategoricalAccuracy, TopKCategoricalAccuracy, SparseTopKCategoricalAccuracy, AUC,
    Precision, Recall, TruePositives, FalsePositives, TrueNegatives, FalseNegatives,
    MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError, RootMeanSquaredError, LogCoshError, CosineSimilarity, Hinge,
    SquaredHinge, CategoricalHinge, KLDivergence, Poisson, BinaryCrossentropy,
    CategoricalCrossentropy, SparseCategoricalCrossentropy, PrecisionAtRecall,
    RecallAtPrecision, SensitivityAtSpecificity, SpecificityAtSensitivity,
    ConcordanceCorrelation, PearsonCorrelation, R2Score, F1Score, FBetaScore, BinaryIoU, IoU,
    MeanIoU, OneHotIoU, OneHotMeanIoU)}

FUNCTIONS = dict(_LOSS_FUNCTIONS)
FUNCTIONS.update({f.__name__: f for f in (
    accuracy, binary_accuracy, categorical_accuracy, sparse_categorical_accuracy,
    top_k_categorical_accuracy, sparse_top_k_categorical_accuracy, pearson_correlation,
    concordance_correlation)})
ALIASES = {
    "mse": "mean_squared_error", "MSE": "mean_squared_error",
    "mae": "mean_absolute_error", "MAE": "mean_absolute_error",
    "mape": "mean_absolute_percentage_error", "MAPE": "mean_absolute_percentage_error",
    "msle": "mean_squared_logarithmic_error", "MSLE": "mean_squared_logarithmic_error",
    "kld": "kl_divergence", "KLD": "kl_divergence", "logcosh": "log_cosh",
    "bce": "binary_crossentropy", "BCE": "binary_crossentropy",
}
_SNAKE_CLASSES = {"auc": AUC, "precision": Precision, "recall": Recall,
                  "root_mean_squared_error": RootMeanSquaredError, "rmse": RootMeanSquaredError,
                  "true_positives": TruePositives, "false_positives": FalsePositives,
                  "true_negatives": TrueNegatives, "false_negatives": FalseNegatives}

mse = MSE = FUNCTIONS["mean_squared_error"]
mae = MAE = FUNCTIONS["mean_absolute_error"]
mape = MAPE = FUNCTIONS["mean_absolute_percentage_error"]
msle = MSLE = FUNCTIONS["mean_squared_logarithmic_error"]


def get(identifier):
    """Resolves a metric: a Metric, a callable, a name (function names give the function,
    class names and 'auc'/'precision'/'recall' an instance) or a config dict."""
    if identifier is None or isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, str):
        if identifier in CLASSES:
            return CLASSES[identifier]()
        name = ALIASES.get(identifier, identifier)
        if name in FUNCTIONS:
            return FUNCTIONS[name]
        if name.lower() in _SNAKE_CLASSES:
            return _SNAKE_CLASSES[name.lower()]()
        raise ValueError(f"Could not interpret metric identifier: {identifier}")
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret metric identifier: {identifier!r}")


def serialize(metric):
    return {"module": "keras.metrics", "class_name": type(metric).__name__,
            "config": metric.get_config(), "registered_name": None}


def deserialize(config, custom_objects=None):
    name = config["class_name"]
    cls = _custom(config, custom_objects) or CLASSES.get(name)
    if cls is None:
        raise ValueError(f"Unknown metric: '{name}'.")
    return cls.from_config(dict(config.get("config") or {}))


def _custom(config, custom_objects):
    """A custom or registered class for a config entry (None when it names a built-in)."""
    from fkeras.saving.object_registration import find_custom

    return find_custom(custom_objects, config.get("registered_name"), config.get("class_name"))
