"""Node: one call of one layer on symbolic tensors.

Creating a Node appends it to the layer's `_inbound_nodes` and to every inbound layer's
`_outbound_nodes`, and stamps `_keras_history = (layer, node_index, tensor_index)` on each
output. Keras 2 field names (`outbound_layer`, `inbound_layers`, `node_indices`,
`tensor_indices`, `input_tensors`, `output_tensors`, `input_shapes`, `output_shapes`) and Keras 3
ones (`operation`, `arguments`, `outputs`, `parent_nodes`, `is_input`) are both available.
"""

from fkeras.engine.keras_tensor import KerasHistory, KerasTensor
from fkeras.utils import nest


class Node:
    def __init__(self, layer, call_args=(), call_kwargs=None, outputs=()):
        self.operation = layer
        self.call_args = tuple(call_args)
        self.call_kwargs = dict(call_kwargs or {})
        self.outputs_structure = outputs
        self.input_tensors = [t for t in nest.flatten((self.call_args, self.call_kwargs))
                              if isinstance(t, KerasTensor)]
        self.output_tensors = nest.flatten(outputs)
        # Every input must already have a history (InputLayer nodes have no inputs).
        self.inbound_history = [t._keras_history for t in self.input_tensors]

        self.node_index = len(layer._inbound_nodes)
        layer._inbound_nodes.append(self)
        for h in self.inbound_history:
            if h is not None:
                h.layer._outbound_nodes.append(self)
        for i, t in enumerate(self.output_tensors):
            t._keras_history = KerasHistory(layer, self.node_index, i)

    # Keras 2 names.
    @property
    def outbound_layer(self):
        return self.operation

    @property
    def layer(self):
        return self.operation

    @property
    def inbound_layers(self):
        return [h.layer for h in self.inbound_history]

    @property
    def node_indices(self):
        return [h.node_index for h in self.inbound_history]

    @property
    def tensor_indices(self):
        return [h.tensor_index for h in self.inbound_history]

    @property
    def input_shapes(self):
        shapes = [t.shape for t in self.input_tensors]
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def output_shapes(self):
        shapes = [t.shape for t in self.output_tensors]
        return shapes[0] if len(shapes) == 1 else shapes

    # Keras 3 names.
    @property
    def arguments(self):
        return self.call_args, self.call_kwargs

    @property
    def outputs(self):
        return self.output_tensors

    @property
    def is_input(self):
        return not self.input_tensors

    @property
    def parent_nodes(self):
        return [h.layer._inbound_nodes[h.node_index] for h in self.inbound_history]

    def __repr__(self):
        return f"<Node operation={self.operation.name}, index={self.node_index}>"
