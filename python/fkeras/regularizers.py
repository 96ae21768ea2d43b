"""Weight regularizers (Keras 3): L1, L2, L1L2, OrthogonalRegularizer; each returns a loss."""

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


ALIASES = {"l1": L1, "l2": L2, "l1_l2": L1L2}
# Keras 3 also exports the classes under their lowercase names (`regularizers.l2(1e-3)`).
l1, l2, l1_l2 = L1, L2, L1L2
CLASSES = {"L1": L1, "L2": L2, "L1L2": L1L2}
get = make_get("regularizer", Regularizer, ALIASES, CLASSES, allow_callable=True)


def deserialize(config, custom_objects=None):
    """A regularizer from its name or config dict (built-in or registered classes only)."""
    from fkeras.saving.serialization_lib import deserialize_keras_object

    if isinstance(config, dict) and "class_name" in config:
        return deserialize_keras_object(config, custom_objects)
    return get(config)


def serialize(regularizer):
    return serialize_object(regularizer, "keras.regularizers")
