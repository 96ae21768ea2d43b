"""Weight regularizers (Keras 3): L1, L2, L1L2, OrthogonalRegularizer; each returns a loss."""

import math

import numpy as np

from fkeras import ops
from fkeras.utils.serialization import make_get, serialize_object


class Regularizer:
    def __call__(self, x):
        return 0.0

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class L1L2(Regularizer):
    def __init__(self, l1=0.0, l2=0.0):
        self.l1, self.l2 = float(l1), float(l2)

    def __call__(self, x):
        loss = 0.0
        if self.l1:
            loss = ops.multiply(self.l1, ops.sum(ops.absolute(x)))
        if self.l2:
            l2 = ops.multiply(self.l2, ops.sum(ops.square(x)))
            loss = l2 if isinstance(loss, float) else ops.add(loss, l2)
        return loss

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


class L1(L1L2):
    def __init__(self, l1=0.01):
        super().__init__(l1=l1)

    def get_config(self):
        return {"l1": self.l1}


class L2(L1L2):
    def __init__(self, l2=0.01):
        super().__init__(l2=l2)

    def get_config(self):
        return {"l2": self.l2}


def _non_negative_float(value, name):
    if not isinstance(value, (float, int)) or isinstance(value, bool) or math.isinf(value) \
            or math.isnan(value) or value < 0:
        raise ValueError(f"Invalid value for argument {name}: expected a non-negative float."
                         f"Received: {name}={value}")
    return float(value)


class OrthogonalRegularizer(Regularizer):
    """Pushes the rows (`mode="rows"`) or columns of a rank-2 weight towards orthogonality:
    `factor * 0.5 * sum(|off-diagonal cosines|) / number of pairs` (Keras 3)."""

    def __init__(self, factor=0.01, mode="rows"):
        self.factor = _non_negative_float(factor, "factor")
        if mode not in {"rows", "columns"}:
            raise ValueError('Invalid value for argument `mode`. Expected one of {"rows", '
                             f'"columns"}}. Received: mode={mode}')
        self.mode = mode

    def __call__(self, x):
        if len(x.shape) != 2:
            raise ValueError("Inputs to OrthogonalRegularizer must have rank 2. Received: "
                             f"inputs.shape={tuple(x.shape)}")
        if self.mode == "rows":
            unit = ops.normalize(x, axis=1)
            product = ops.matmul(unit, ops.transpose(unit))
            size = x.shape[0]
        else:
            unit = ops.normalize(x, axis=0)
            product = ops.matmul(ops.transpose(unit), unit)
            size = x.shape[1]
        off_diagonal = ops.multiply(product, (1.0 - np.eye(size)).astype(np.float32))
        pairs = size * (size - 1.0) / 2.0
        return ops.divide(ops.multiply(self.factor * 0.5, ops.sum(ops.absolute(off_diagonal))),
                          pairs)

    def get_config(self):
        return {"factor": self.factor, "mode": self.mode}


ALIASES = {"l1": L1, "l2": L2, "l1_l2": L1L2, "orthogonal_regularizer": OrthogonalRegularizer}
# Keras 3 also exports the classes under their lowercase names (`regularizers.l2(1e-3)`).
l1, l2, l1_l2, orthogonal_regularizer = L1, L2, L1L2, OrthogonalRegularizer
CLASSES = {"L1": L1, "L2": L2, "L1L2": L1L2, "OrthogonalRegularizer": OrthogonalRegularizer}
get = make_get("regularizer", Regularizer, ALIASES, CLASSES, allow_callable=True)


def deserialize(config, custom_objects=None):
    """A regularizer from its name or config dict (built-in or registered classes only)."""
    from fkeras.saving.serialization_lib import deserialize_keras_object

    if isinstance(config, dict) and "class_name" in config:
        return deserialize_keras_object(config, custom_objects)
    return get(config)


def serialize(regularizer):
    return serialize_object(regularizer, "keras.regularizers")
