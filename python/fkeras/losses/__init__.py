"""fkeras.losses: Keras losses by string, function and class.

Functions (`mean_squared_error(y_true, y_pred)`) return per-sample values; classes reduce
them ("sum_over_batch_size" by default) with optional sample weights. Every loss is an op with
its backward (fkeras/losses/loss_ops.py).
"""

from fkeras.losses import loss_ops  # noqa: F401  (registers the loss ops)
from fkeras.losses.loss import Loss, LossFunctionWrapper, reduce_weighted_values
from fkeras.losses import composed as _composed
from fkeras.losses.composed import (
    CTC,
    BinaryFocalCrossentropy,
    CategoricalFocalCrossentropy,
    CategoricalGeneralizedCrossEntropy,
    Circle,
    Dice,
    Tversky,
    binary_focal_crossentropy,
    categorical_focal_crossentropy,
    categorical_generalized_cross_entropy,
    circle,
    ctc,
    dice,
    tversky,
)
from fkeras.losses.losses import (
    ALIASES,
    CLASSES,
    FUNCTIONS,
    BinaryCrossentropy,
    CategoricalCrossentropy,
    CategoricalHinge,
    CosineSimilarity,
    Hinge,
    Huber,
    KLDivergence,
    LogCosh,
    MeanAbsoluteError,
    MeanAbsolutePercentageError,
    MeanSquaredError,
    MeanSquaredLogarithmicError,
    Poisson,
    SparseCategoricalCrossentropy,
    SquaredHinge,
    binary_crossentropy,
    categorical_crossentropy,
    categorical_hinge,
    cosine_similarity,
    hinge,
    huber,
    kl_divergence,
    log_cosh,
    mean_absolute_error,
    mean_absolute_percentage_error,
    mean_squared_error,
    mean_squared_logarithmic_error,
    poisson,
    sparse_categorical_crossentropy,
    squared_hinge,
)

FUNCTIONS.update((f.__name__, f) for f in _composed.FUNCTIONS)
CLASSES.update((c.__name__, c) for c in _composed.CLASSES)

mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kl_divergence
logcosh = log_cosh


def get(identifier):
    """Resolves a loss: None, a name ("mse", "BinaryCrossentropy"), a config dict, a Loss
    instance or a callable. Names of functions give the function, class names an instance
    (Keras 3 behaviour)."""
    if identifier is None or isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, str):
        if identifier in CLASSES:
            return CLASSES[identifier]()
        fn = FUNCTIONS.get(identifier) or ALIASES.get(identifier)
        if fn is None:
            raise ValueError(f"Could not interpret loss identifier: {identifier}")
        return fn
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret loss identifier: {identifier!r}")


def serialize(loss):
    if loss is None or isinstance(loss, str):
        return loss
    if isinstance(loss, Loss):
        return {"module": "keras.losses", "class_name": type(loss).__name__,
                "config": loss.get_config(), "registered_name": None}
    return getattr(loss, "__name__", str(loss))


def deserialize(name, custom_objects=None):
    """A loss from its name or serialized dict (keras.losses.deserialize)."""
    config = name
    if isinstance(config, str):
        obj = (custom_objects or {}).get(config)
        return obj if obj is not None else get(config)
    name = config.get("class_name")
    cls = _custom(config, custom_objects) or CLASSES.get(name)
    if cls is None:
        raise ValueError(f"Unknown loss: '{name}'. Pass it in `custom_objects`.")
    return cls.from_config(dict(config.get("config") or {}))


__all__ = [
    "ALIASES", "CLASSES", "CTC", "FUNCTIONS", "BinaryCrossentropy", "BinaryFocalCrossentropy",
    "CategoricalCrossentropy", "CategoricalFocalCrossentropy",
    "CategoricalGeneralizedCrossEntropy", "Circle", "Dice", "Tversky",
    "binary_focal_crossentropy", "categorical_focal_crossentropy",
    "categorical_generalized_cross_entropy", "circle", "ctc", "dice", "tversky",
    "CategoricalHinge", "CosineSimilarity", "Hinge", "Huber", "KLD", "KLDivergence", "LogCosh",
    "Loss", "LossFunctionWrapper", "MAE", "MAPE", "MSE", "MSLE", "MeanAbsoluteError",
    "MeanAbsolutePercentageError", "MeanSquaredError", "MeanSquaredLogarithmicError", "Poisson",
    "SparseCategoricalCrossentropy", "SquaredHinge", "binary_crossentropy",
    "categorical_crossentropy", "categorical_hinge", "cosine_similarity", "deserialize", "get",
    "hinge", "huber", "kl_divergence", "kld", "log_cosh", "logcosh", "mae", "mape",
    "mean_absolute_error", "mean_absolute_percentage_error", "mean_squared_error",
    "mean_squared_logarithmic_error", "mse", "msle", "poisson", "reduce_weighted_values",
    "serialize", "sparse_categorical_crossentropy", "squared_hinge",
]


def _custom(config, custom_objects):
    """A custom or registered class for a config entry (None when it names a built-in)."""
    from fkeras.saving.object_registration import find_custom

    return find_custom(custom_objects, config.get("registered_name"), config.get("class_name"))
