"""OpLayer: a raw fkeras.ops call inside a functional graph, recorded as a node.

Files: an op that Keras 3 also has (the same function name, attributes Keras's operation
class takes) is written as Keras writes it (`{"module": "keras.src.ops.numpy", "class_name":
"Add", ...}`, `layers/keras_op_table.py`), so Keras loads fkeras models that use `x + y`; any
other op is written as an fkeras `OpLayer` entry, which only fkeras reads."""

from fkeras.layers.layer import Layer
from fkeras.ops.registry import apply


class OpLayer(Layer):
    """Wraps one op and its attributes so a functional model can replay it."""

    def __init__(self, op, attrs, name=None):
        from fkeras.engine import naming

        super().__init__(name=name or naming.unique_name(op.name))
        self.op = op
        self.attrs = dict(attrs)
        self.built = True

    def call(self, *inputs):
        if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
            inputs = tuple(inputs[0])
        return apply(self.op, *inputs, **self.attrs)

    def _record_call(self, inputs, outputs):
        from fkeras.engine.node import Node

        Node(self, tuple(inputs), {}, outputs)
        return outputs

    def get_config(self):
        return {"name": self.name, "op": self.op.name, "attrs": self.attrs}

    def keras_entry(self):
        """(module, class_name, config, extra call arguments) of the Keras operation this op
        is, or None when Keras has no such operation."""
        from fkeras.layers.keras_op_table import KERAS_OPS

        name, attrs, extra = self.op.name, dict(self.attrs), []
        if name == "activation":
            mapped = _ACTIVATIONS.get(attrs.get("code"))
            if mapped is None:
                return None
            name, alpha_key, default = mapped
            alpha = attrs.get("alpha", 0.0)
            attrs = {}
            if alpha_key is not None:
                attrs[alpha_key] = alpha
            elif alpha not in (0.0, default):
                return None
            if name == "gelu":
                attrs["approximate"] = default
        elif name == "getitem":
            extra = [attrs.pop("key")]
            name = "get_item"
        entry = KERAS_OPS.get(name)
        if entry is None or not set(attrs) <= set(entry[2]):
            return None
        group, class_name, _ = entry
        if name in _SEQUENCE_FIRST:
            extra = ["__pack_args__"] + extra  # Keras calls these with one list of tensors
        config = {"name": self.name}
        for key, value in attrs.items():
            config[key] = _plain(value)
        return f"keras.src.ops.{group}", class_name, config, extra

    @classmethod
    def from_config(cls, config):
        from fkeras.ops.registry import REGISTRY

        return cls(REGISTRY[config["op"]], config.get("attrs", {}), name=config.get("name"))


def _plain(value):
    """An attribute as JSON (dtypes by name, tuples as lists)."""
    import numpy as np

    if isinstance(value, np.dtype) or isinstance(value, type):
        return np.dtype(value).name
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


_SEQUENCE_FIRST = frozenset(("concatenate", "stack", "hstack", "vstack", "dstack"))

# activation code -> (Keras function, its alpha-like argument or None, default / gelu mode)
_ACTIVATIONS = {1: ("relu", None, 0.0), 2: ("sigmoid", None, 0.0), 3: ("tanh", None, 0.0),
                4: ("elu", "alpha", 1.0), 5: ("selu", None, 0.0), 6: ("gelu", None, False),
                7: ("gelu", None, True), 8: ("softplus", None, 0.0),
                9: ("softsign", None, 0.0), 10: ("silu", None, 0.0),
                11: ("hard_sigmoid", None, 0.0), 12: ("exp", None, 0.0),
                13: ("leaky_relu", "negative_slope", 0.2)}
