"""clone_model (keras.models.clone_model): the same architecture with fresh weights.

A Sequential model is rebuilt from clones of its layers; a functional model by replaying its
graph (its config's inbound nodes) with a clone of each layer. A clone is
`clone_function(layer)`, by default `layer.__class__.from_config(layer.get_config())`, so
weights are newly initialized; a `clone_function` that returns the layer itself shares it.
"""

from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.core.input_layer import InputLayer


def _default_clone(layer):
    return layer.__class__.from_config(layer.get_config())


def _checked(clone_function, layer):
    new = clone_function(layer)
    from fkeras.layers.layer import Layer

    if not isinstance(new, Layer):
        raise ValueError("The `clone_function` passed to `clone_model` must return a Layer "
                         f"instance. Received: {new!r} for layer {layer.name!r}.")
    return new


def clone_model(model, input_tensors=None, clone_function=None, call_function=None,
                recursive=False, **kwargs):
    """A new model of the same architecture as `model`, with newly initialized weights.

    Args:
        model: a Functional or Sequential model.
        input_tensors: KerasTensors (from `Input`) to build the clone on, instead of new
            inputs of the same shapes.
        clone_function: `layer -> new layer`; default: the layer rebuilt from its config.
        call_function: `(layer, *args, **kwargs) -> outputs`, how each layer is called in
            the clone of a functional model (default: `layer(*args, **kwargs)`).
        recursive: also clone the layers of nested models with `clone_function` (otherwise a
            nested model is itself cloned by `clone_function`).

    Returns:
        The new model (not compiled).

    Example:
    ```python
    twin = fkeras.models.clone_model(model)
    twin.set_weights(model.get_weights())
    ```
    """
    from fkeras.models.functional import Functional
    from fkeras.models.sequential import Sequential

    if kwargs:
        raise ValueError(f"Unexpected keyword argument(s) for `clone_model`: {list(kwargs)}")
    fn = clone_function or _default_clone
    if recursive:
        inner = fn

        def fn(layer):  # noqa: F811
            if isinstance(layer, Functional):
                return clone_model(layer, clone_function=clone_function,
                                   call_function=call_function, recursive=True)
            return inner(layer)
    if isinstance(model, Sequential):
        return _clone_sequential(model, input_tensors, fn, call_function)
    if isinstance(model, Functional):
        return _clone_functional(model, input_tensors, fn, call_function)
    raise ValueError("`clone_model` takes a Functional or Sequential model; a subclassed model "
                     f"cannot be cloned from its graph. Received: {type(model).__name__}.")


def _clone_sequential(model, input_tensors, fn, call_function):
    from fkeras.layers.core.input_layer import Input
    from fkeras.models.functional import Functional
    from fkeras.models.sequential import Sequential

    if call_function is not None:
        raise ValueError("`call_function` applies to functional models; received a Sequential "
                         "model.")
    layers = [_checked(fn, layer) for layer in model.layers]
    clone = Sequential(name=model.name, trainable=model.trainable)
    if input_tensors is not None:
        x = input_tensors[0] if isinstance(input_tensors, (list, tuple)) else input_tensors
        for layer in layers:
            clone.add(layer)
        return Functional(x, clone(x), name=model.name)
    if model._input_layer is not None:
        inp = model._input_layer
        clone.add(Input(batch_shape=tuple(inp.batch_shape), dtype=inp.dtype, name=inp.name))
    for layer in layers:
        clone.add(layer)
    return clone


def _clone_functional(model, input_tensors, fn, call_function):
    from fkeras.layers import deserialize_layer
    from fkeras.models.functional import Functional
    from fkeras.models.functional_config import functional_get_config, functional_from_config

    config = functional_get_config(model)
    by_name = {layer.name: layer for layer in model._graph_layers}
    inputs = None
    if input_tensors is not None:
        inputs = (list(input_tensors) if isinstance(input_tensors, (list, tuple))
                  else [input_tensors])
        names = [ref[0] for ref in config["input_layers"]]
        if len(inputs) != len(names) or not all(isinstance(t, KerasTensor) for t in inputs):
            raise ValueError(f"`input_tensors` must be {len(names)} KerasTensor(s), one per "
                             f"model input; received {input_tensors!r}.")
        inputs = dict(zip(names, inputs))

    def make_layer(entry):
        layer = by_name[entry["name"]]
        if isinstance(layer, InputLayer):
            if inputs is not None:
                return inputs[layer.name]
            return deserialize_layer(entry)
        return _checked(fn, layer)

    cls = type(model) if type(model).__init__ is Functional.__init__ else Functional
    return functional_from_config(cls, config, make_layer=make_layer, call_function=call_function)
