"""model.summary() in Keras 2's table layout.

Chosen over Keras 3's box-drawing table because it is plain ASCII (logs, CI, any terminal) and
matches the Functional API guide's era. Like Keras 2: 65 columns for sequential-like models,
98 with a "Connected to" column for graphs with branches; long fields wrap inside their column
(never truncated); footer with parameter counts and sizes, optimizer variables not included.
"""

import numpy as np


def _is_sequential_like(model):
    from fkeras.models.sequential import Sequential

    if isinstance(model, Sequential) or not hasattr(model, "_nodes"):
        return True
    depths = {}
    for node in model._nodes:
        depths.setdefault(model._node_depths[id(node)], []).append(node)
        if len(node.inbound_history) > 1:
            return False
    if any(len(nodes) > 1 for nodes in depths.values()):
        return False
    layers = [n.operation for n in model._nodes]
    return len(layers) == len({id(x) for x in layers})


def _wrap(text, width):
    width = max(width, 1)
    lines = []
    for part in str(text).split("\n"):
        while len(part) > width:
            cut = part.rfind(" ", 0, width + 1)
            cut = width if cut <= 0 else cut
            lines.append(part[:cut].rstrip())
            part = part[cut:].lstrip()
        lines.append(part)
    return lines


def _format_row(fields, positions):
    """Lines of one table row: each field starts with a space and wraps in its column."""
    starts = [0] + positions[:-1]
    cols = [_wrap(f, end - start - 1) for f, start, end in zip(fields, starts, positions)]
    height = max(len(c) for c in cols)
    out = []
    for i in range(height):
        line = ""
        for col, start, end in zip(cols, starts, positions):
            text = col[i] if i < len(col) else ""
            line = line.ljust(start) + " " + text
            line = line.ljust(end)
        out.append(line)
    return out


def readable_size(num_bytes):
    units = ["Byte", "KB", "MB", "GB", "TB"]
    size = float(num_bytes)
    for unit in units:
        if size < 1024 or unit == units[-1]:
            return f"{size:.2f} {unit}"
        size /= 1024.0


def _shape_text(layer, model):
    from fkeras.layers.core.input_layer import InputLayer

    if isinstance(layer, InputLayer):
        return str([layer.batch_shape])
    nodes = [n for n in layer._inbound_nodes if id(n) in model._node_ids] if hasattr(model, "_node_ids") else layer._inbound_nodes
    shapes = {str(n.output_shapes) for n in nodes}
    if len(shapes) == 1:
        return shapes.pop()
    return "multiple" if shapes else "?"


def _params(layer):
    return int(sum(int(np.prod(w.shape)) for w in layer.weights)) if layer.built else 0


def _connections(layer, model):
    out = []
    for node in layer._inbound_nodes:
        if id(node) not in model._node_ids:
            continue
        for h in node.inbound_history:
            out.append(f"{h.layer.name}[{h.node_index}][{h.tensor_index}]")
    return str(out)


def _unbuilt_params(layer):
    """Keras 3's Param # of a layer in an unbuilt model: "0 (unbuilt)" for a layer that
    still has weights to create, else its count."""
    from fkeras.layers.layer import Layer

    if layer.built or type(layer).build is Layer.build:
        return str(_params(layer))
    return "0 (unbuilt)"


def _print_unbuilt(model, line_length, positions, print_fn):
    """An unbuilt model (a Sequential without an input shape): every output shape is "?" and
    layers still to be built show "0 (unbuilt)" parameters, as in Keras 3."""
    line_length = line_length or 65
    positions = [int(line_length * p) if p <= 1 else int(p)
                 for p in (positions or [0.42, 0.78, 1.0])]
    layers = list(getattr(model, "_stack", None) or model.layers)
    print_fn(f'Model: "{model.name}"')
    print_fn("_" * line_length)
    for line in _format_row(["Layer (type)", "Output Shape", "Param #"], positions):
        print_fn(line)
    print_fn("=" * line_length)
    for i, layer in enumerate(layers):
        fields = [f"{layer.name} ({_class_name(layer)})", "?", _unbuilt_params(layer)]
        for line in _format_row(fields, positions):
            print_fn(line)
        if i < len(layers) - 1:
            print_fn(" " * line_length)
    print_fn("=" * line_length)
    built = [w for layer in layers if layer.built for w in layer.weights]
    trainable = sum(int(np.prod(w.shape)) for w in built if w.trainable)
    total = sum(int(np.prod(w.shape)) for w in built)
    for label, count in (("Total", total), ("Trainable", trainable),
                         ("Non-trainable", total - trainable)):
        print_fn(f"{label} params: {count} ({readable_size(count * 4)})")
    print_fn("_" * line_length)


def print_summary(model, line_length=None, positions=None, print_fn=None):
    print_fn = print_fn or print
    if not model.built:
        _print_unbuilt(model, line_length, positions, print_fn)
        return
    sequential_like = _is_sequential_like(model)
    if sequential_like:
        line_length = line_length or 65
        positions = positions or [0.45, 0.85, 1.0]
        headers = ["Layer (type)", "Output Shape", "Param #"]
    else:
        line_length = line_length or 98
        positions = positions or [0.33, 0.55, 0.67, 1.0]
        headers = ["Layer (type)", "Output Shape", "Param #", "Connected to"]
    positions = [int(line_length * p) if p <= 1 else int(p) for p in positions]
    model._node_ids = {id(n) for n in getattr(model, "_nodes", [])}
    layers = model.layers if sequential_like else model._graph_layers

    print_fn(f'Model: "{model.name}"')
    print_fn("_" * line_length)
    for line in _format_row(headers, positions):
        print_fn(line)
    print_fn("=" * line_length)
    for i, layer in enumerate(layers):
        fields = [f"{layer.name} ({_class_name(layer)})", _shape_text(layer, model),
                  str(_params(layer))]
        if not sequential_like:
            fields.append(_connections(layer, model))
        for line in _format_row(fields, positions):
            print_fn(line)
        print_fn("=" * line_length if i == len(layers) - 1 else " " * line_length)

    trainable = sum(int(np.prod(w.shape)) for w in model.trainable_weights)
    non_trainable = sum(int(np.prod(w.shape)) for w in model.non_trainable_weights)
    total = trainable + non_trainable
    print_fn(f"Total params: {total} ({readable_size(total * 4)})")
    print_fn(f"Trainable params: {trainable} ({readable_size(trainable * 4)})")
    print_fn(f"Non-trainable params: {non_trainable} ({readable_size(non_trainable * 4)})")
    print_fn("_" * line_length)
    del model._node_ids


def _class_name(layer):
    from fkeras.layers.op_layer import OpLayer
    from fkeras.models.functional import Functional

    if isinstance(layer, OpLayer):
        return type(layer.op).__name__
    from fkeras.models.sequential import Sequential

    if isinstance(layer, Functional) and not isinstance(layer, Sequential) and type(layer) is Functional:
        return "Functional"
    return type(layer).__name__
