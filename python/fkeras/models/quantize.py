"""`Model.quantize` (Keras 3): quantize every quantizable leaf layer of a built model."""

import re
import warnings

from fkeras.quantizers import quantization_config as qconfig


def flatten_layers(layer):
    """The layer, then every layer nested in it, depth first, each once (Keras's
    `_flatten_layers()`)."""
    seen, out, stack = set(), [], [layer]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        out.append(current)
        children = list(getattr(current, "_layers", None) or [])
        if not children and hasattr(current, "layers") and current is not layer:
            children = list(current.layers)
        if current is layer and hasattr(current, "layers"):
            children = list(current.layers) + [c for c in children if c not in current.layers]
        stack.extend(reversed(children))
    return out


def _selected(layer, filters):
    if filters is None:
        return True
    if isinstance(filters, str):
        return bool(re.search(filters, layer.name))
    if isinstance(filters, (list, tuple)):
        return any(re.search(pattern, layer.name) for pattern in filters)
    return bool(filters(layer))


def quantize_model(model, mode=None, config=None, filters=None, **kwargs):
    """Quantizes `model`'s leaf layers in place; see `Model.quantize`."""
    type_check = kwargs.pop("type_check", True)
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments passed to {type(model).__name__}: "
                         f"{kwargs}")
    if filters is not None and not (isinstance(filters, (str, list, tuple))
                                    or callable(filters)):
        raise ValueError("The `filters` argument must be a regex string, a list of regex "
                         f"strings, or a callable. Received: {type(filters)}")
    mode, config = qconfig.resolve(mode, config)
    modified = False
    for layer in flatten_layers(model):
        if not _selected(layer, filters) or len(flatten_layers(layer)) != 1:
            continue
        method = getattr(layer, "quantize", None)
        if method is None:  # Keras's base Layer.quantize raises this; the model warns
            warnings.warn(f"Layer {type(layer).__name__} does not have a `quantize` method "
                          "implemented.")
            continue
        try:
            method(mode, type_check=type_check, config=config)
            modified = True
        except NotImplementedError as e:
            warnings.warn(str(e))
    if modified:  # compiled inference/training plans were built for the float kernels
        for key in ("_fk_compiled", "_fk_plans"):
            model.__dict__.pop(key, None)
        for attr in ("train_function", "test_function", "predict_function"):
            if hasattr(model, attr):
                setattr(model, attr, None)
