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

import numpy as np

from fkeras.engine.keras_tensor import KerasTensor
from fkeras.utils import nest


def serialize_node(node, index_of):
    """The config form of `node`; `index_of(layer, node_index)` maps node indices to the
    model's numbering."""
    tensor_kwargs = any(isinstance(v, KerasTensor) for v in nest.flatten(node.call_kwargs))
    from fkeras.layers import keras_operation_entry

    op_entry = keras_operation_entry(node.layer)  # Keras reads an operation's own arguments
    if len(node.call_args) <= 1 and not tensor_kwargs and op_entry is None:
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
        if isinstance(x, slice):
            return {"class_name": "__slice__",
                    "config": {"start": x.start, "stop": x.stop, "step": x.step}}
        if x is Ellipsis:
            return {"class_name": "__ellipsis__", "config": {}}
        if isinstance(x, np.ndarray) and x.ndim == 0:
            return x.item()  # a constant operand (`x * 2.0`), as Keras writes it
        if isinstance(x, np.ndarray):
            return {"class_name": "__numpy__",
                    "config": {"value": x.tolist(), "dtype": str(x.dtype)}}
        if isinstance(x, np.generic):
            return x.item()
        return x

    args = list(node.call_args)
    if op_entry is not None:
        extra = list(op_entry[3])
        if extra[:1] == ["__pack_args__"]:  # the op takes one list of tensors (concatenate)
            args, extra = [args], extra[1:]
        args += extra
    return {"args": encode(args), "kwargs": encode(dict(node.call_kwargs))}


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


_NOT_SPECIAL = object()


def _decode_special(x):
    """Keras 3's encodings of non-JSON call arguments: slices, Ellipsis, NumPy arrays."""
    kind = x.get("class_name")
    config = x.get("config")
    if kind == "__slice__" and isinstance(config, dict):
        return slice(config.get("start"), config.get("stop"), config.get("step"))
    if kind == "__ellipsis__":
        return Ellipsis
    if kind == "__numpy__" and isinstance(config, dict):
        import numpy as np

        return np.asarray(config.get("value"), dtype=config.get("dtype"))
    return _NOT_SPECIAL


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
                special = _decode_special(x)
                if special is not _NOT_SPECIAL:
                    return special
                return {k: decode(v) for k, v in x.items()}
            return x

        return call(layer, *decode(node.get("args") or []), **decode(node.get("kwargs") or {}))
    tensors = [lookup(ref) for ref in node]
    kwargs = node[0][3] if node and len(node[0]) > 3 else {}
    return call(layer, tensors[0] if len(tensors) == 1 else tensors, **kwargs)
