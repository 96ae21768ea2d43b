"""Layer calls ("nodes") in a functional model's config, in two forms:

- the Keras 2 list `[[layer, node, tensor, kwargs], ...]`: the call's single positional
  argument is the listed tensor (or the list of them), `kwargs` its constant keyword
  arguments. fkeras writes this form whenever it is exact (one positional argument, no tensor
  among the keyword arguments), so the files of the simple layers do not change;
- Keras 3's dict `{"args": [...], "kwargs": {...}}` where each tensor is
  `{"class_name": "__keras_tensor__", "config": {"shape", "dtype", "keras_history": [layer,
  node, tensor]}}`: for calls with several tensor arguments (`MultiHeadAttention(query,
  value)`, `RNN(x, initial_state=[h, c])`); Keras 3 reads it as it writes it.
"""

from fkeras.engine.keras_tensor import KerasTensor
from fkeras.utils import nest


def serialize_node(node, index_of):
    """The config form of `node`; `index_of(layer, node_index)` maps node indices to the
    model's numbering."""
    tensor_kwargs = any(isinstance(v, KerasTensor) for v in nest.flatten(node.call_kwargs))
    if len(node.call_args) <= 1 and not tensor_kwargs:
        kwargs = dict(node.call_kwargs)
        return [[h.layer.name, index_of(h.layer, h.node_index), h.tensor_index, kwargs]
                for h in node.inbound_history]

    def encode(x):
        if isinstance(x, KerasTensor):
            h = x._keras_history
            return {"class_name": "__keras_tensor__",
                    "config": {"shape": list(x.shape), "dtype": x.dtype,
                               "keras_history": [h.layer.name, index_of(h.layer, h.node_index),
                                                 h.tensor_index]}}
        if isinstance(x, (list, tuple)):
            return [encode(v) for v in x]
        if isinstance(x, dict):
            return {k: encode(v) for k, v in x.items()}
        return x

    return {"args": encode(list(node.call_args)), "kwargs": encode(dict(node.call_kwargs))}


def tensor_ref(entry):
    """[layer, node, tensor] of a serialized tensor entry, else None."""
    if isinstance(entry, dict) and entry.get("class_name") == "__keras_tensor__":
        return list(entry["config"]["keras_history"])
    return None


def node_refs(node):
    """Every [layer, node, tensor] reference a node entry (either form) depends on."""
    if isinstance(node, dict):
        refs = []
        stack = [node.get("args") or [], node.get("kwargs") or {}]
        while stack:
            item = stack.pop()
            ref = tensor_ref(item)
            if ref is not None:
                refs.append(ref)
            elif isinstance(item, (list, tuple)):
                stack.extend(item)
            elif isinstance(item, dict):
                stack.extend(item.values())
        return refs
    return [ref[:3] for ref in node]


def call_node(layer, node, lookup, call=None):
    """Calls `layer` as `node` describes; `lookup([layer, node, tensor])` gives a tensor;
    `call(layer, *args, **kwargs)` makes the call (default: `layer(*args, **kwargs)`)."""
    call = call or (lambda lyr, *args, **kwargs: lyr(*args, **kwargs))
    if isinstance(node, dict):
        def decode(x):
            ref = tensor_ref(x)
            if ref is not None:
                return lookup(ref)
            if isinstance(x, (list, tuple)):
                return [decode(v) for v in x]
            if isinstance(x, dict):
                return {k: decode(v) for k, v in x.items()}
            return x

        return call(layer, *decode(node.get("args") or []), **decode(node.get("kwargs") or {}))
    tensors = [lookup(ref) for ref in node]
    kwargs = node[0][3] if node and len(node[0]) > 3 else {}
    return call(layer, tensors[0] if len(tensors) == 1 else tensors, **kwargs)
