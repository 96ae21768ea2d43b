"""OpLayer: a raw fkeras.ops call inside a functional graph, recorded as a node."""

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

    @classmethod
    def from_config(cls, config):
        from fkeras.ops.registry import REGISTRY

        return cls(REGISTRY[config["op"]], config.get("attrs", {}), name=config.get("name"))
