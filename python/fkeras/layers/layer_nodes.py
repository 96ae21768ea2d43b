"""Keras 2's attributes of a layer over its inbound nodes (`input`, `output`, `input_shape`,
`output_shape`, `get_input_at(i)`, ...), a part of `Layer`."""


class NodeAttributesMixin:
    def _node_attr(self, attr, what):
        if not self._inbound_nodes:
            raise AttributeError(
                f'The layer "{self.name}" has never been called and thus has no defined {what}.'
            )
        values = [getattr(n, attr) for n in self._inbound_nodes]
        if all(v == values[0] for v in values[1:]):
            return values[0]
        raise AttributeError(
            f'The layer "{self.name}" has multiple inbound nodes, with different {what}s. Hence '
            f'the notion of "{what}" is ill-defined for the layer. Use '
            f"`get_{what.replace(' ', '_')}_at(node_index)` instead."
        )

    @property
    def input_shape(self):
        if not self._inbound_nodes:
            raise AttributeError(
                f'The layer "{self.name}" has never been called and thus has no defined input '
                "shape. Note that the `input_shape` property is only available for Functional "
                "and Sequential models."
            )
        return self._node_attr("input_shapes", "input shape")

    @property
    def output_shape(self):
        if not self._inbound_nodes:
            raise AttributeError(
                f'The layer "{self.name}" has never been called and thus has no defined output '
                "shape."
            )
        return self._node_attr("output_shapes", "output shape")

    @property
    def input(self):
        """The input tensor(s) of node 0 (Keras 2/3: node 0 also for shared layers)."""
        if not self._inbound_nodes:
            raise AttributeError(
                f"The layer {self.name} has never been called and thus has no defined input."
            )
        return _unwrap(self._inbound_nodes[0].input_tensors)

    @property
    def output(self):
        if not self._inbound_nodes:
            raise AttributeError(
                f"The layer {self.name} has never been called and thus has no defined output."
            )
        return _unwrap(self._inbound_nodes[0].output_tensors)

    def _get_node(self, node_index, what):
        if not self._inbound_nodes:
            raise RuntimeError(
                f"The layer {self.name} has never been called and thus has no defined {what}."
            )
        if not 0 <= node_index < len(self._inbound_nodes):
            raise ValueError(
                f"Asked to get {what} at node {node_index}, but the layer has only "
                f"{len(self._inbound_nodes)} inbound nodes."
            )
        return self._inbound_nodes[node_index]

    def get_input_at(self, node_index):
        return _unwrap(self._get_node(node_index, "input").input_tensors)

    def get_output_at(self, node_index):
        return _unwrap(self._get_node(node_index, "output").output_tensors)

    def get_input_shape_at(self, node_index):
        return self._get_node(node_index, "input shape").input_shapes

    def get_output_shape_at(self, node_index):
        return self._get_node(node_index, "output shape").output_shapes


def _unwrap(tensors):
    return tensors[0] if len(tensors) == 1 else list(tensors)
