"""`Model.quantize` (Keras 3): quantize every quantizable leaf layer of a built model."""

import re
import warnings

from fkeras.quantizers import quantization_config as qconfig


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
    # Keras's `_flatten_layers()`: the model, then every nested layer, depth first, each once;
    # only leaves (no nested layers) are quantized.
    for layer in [model] + model._all_layers():
        if not _selected(layer, filters) or layer._layers:
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
