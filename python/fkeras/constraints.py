"""Weight constraints (Keras 3), applied after each optimizer update."""

import numpy as np

from fkeras.utils.serialization import make_get, serialize_object


class Constraint:
    def __call__(self, w):
        return w

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class NonNeg(Constraint):
    def __call__(self, w):
        return w * (w >= 0)


class MaxNorm(Constraint):
    def __init__(self, max_value=2, axis=0):
        self.max_value, self.axis = max_value, axis

    def __call__(self, w):
        norms = np.sqrt(np.sum(np.square(w), axis=self.axis, keepdims=True))
        desired = np.clip(norms, 0, self.max_value)
        return w * (desired / (1e-7 + norms))

    def get_config(self):
        return {"max_value": self.max_value, "axis": self.axis}


class UnitNorm(Constraint):
    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        return w / (1e-7 + np.sqrt(np.sum(np.square(w), axis=self.axis, keepdims=True)))

    def get_config(self):
        return {"axis": self.axis}


class MinMaxNorm(Constraint):
    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w):
        norms = np.sqrt(np.sum(np.square(w), axis=self.axis, keepdims=True))
        desired = self.rate * np.clip(norms, self.min_value, self.max_value) + (1 - self.rate) * norms
        return w * (desired / (1e-7 + norms))

    def get_config(self):
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate,
                "axis": self.axis}


ALIASES = {"non_neg": NonNeg, "max_norm": MaxNorm, "unit_norm": UnitNorm,
           "min_max_norm": MinMaxNorm}
CLASSES = {"NonNeg": NonNeg, "MaxNorm": MaxNorm, "UnitNorm": UnitNorm, "MinMaxNorm": MinMaxNorm}
get = make_get("constraint", Constraint, ALIASES, CLASSES, allow_callable=True)
non_neg, max_norm, unit_norm, min_max_norm = NonNeg, MaxNorm, UnitNorm, MinMaxNorm  # Keras 3


def deserialize(config, custom_objects=None):
    """A constraint from its name or config dict (built-in or registered classes only)."""
    from fkeras.saving.serialization_lib import deserialize_keras_object

    if isinstance(config, dict) and "class_name" in config:
        return deserialize_keras_object(config, custom_objects)
    return get(config)


def serialize(constraint):
    return serialize_object(constraint, "keras.constraints")
