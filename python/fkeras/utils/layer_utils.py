"""Graph helpers of `keras.utils` that look at layers and symbolic tensors."""

from fkeras.utils import nest


def get_source_inputs(tensor):
    """The input tensors needed to compute `tensor` (Keras's `get_source_inputs`).

    Walks the graph back from `tensor` to the `Input`s it depends on, each listed once, in
    the order they are first reached (depth first, inputs of each call in order).

    Args:
        tensor: a symbolic tensor (anything else is returned as it is).

    Returns:
        A list of input tensors.
    """
    if not hasattr(tensor, "_keras_history"):
        return tensor
    sources, seen = [], set()
    stack = [tensor]
    while stack:
        t = stack.pop()
        history = t._keras_history
        layer = None if history is None else history.layer
        if layer is None or not layer._inbound_nodes:
            found = [t]
        else:
            node = layer._inbound_nodes[history.node_index]
            if node.is_input:
                found = nest.flatten(node.output_tensors)
            else:
                stack.extend(reversed(node.input_tensors))
                continue
        for x in found:
            if id(x) not in seen:
                seen.add(id(x))
                sources.append(x)
    return sources
