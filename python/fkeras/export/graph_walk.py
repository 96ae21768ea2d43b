"""Walks a Functional (or Sequential) model's nodes in topological order and converts each
layer call through the converter table, inlining nested Functional models."""

import numpy as np

from fkeras.engine.keras_tensor import KerasTensor
from fkeras.export.converters import find_converter
from fkeras.export.converters.base import Call
from fkeras.utils import nest


def check_exportable(model):
    """Raises a ValueError unless `model` is a built Functional or Sequential model."""
    from fkeras.models.functional import Functional

    if not isinstance(model, Functional):
        raise ValueError(
            f'Cannot export model "{model.name}" (of class {type(model).__name__}) to ONNX: '
            "only Functional and Sequential models (a graph of layer calls) can be exported; "
            "a subclassed model's `call` is Python code with no graph to convert. Rebuild it "
            "with the Functional API (keras.Model(inputs, outputs)).")
    if not model.built or not getattr(model, "_nodes", None):
        raise ValueError(f'Model "{model.name}" has not yet been built. It must be built '
                         "before export (give it an Input, or call it on data).")


def _has_mask(t):
    return getattr(t, "_keras_mask", None) is not None


def convert_nodes(b, model, names):
    """Adds the nodes of `model`'s graph to builder `b`.

    Args:
        b: the OnnxBuilder.
        model: a Functional model.
        names: {id(KerasTensor): ONNX name}, holding at least the model's inputs; filled in
            with every tensor the graph computes.
    """
    from fkeras.models.functional import Functional

    for node in model._nodes:
        if node.is_input:
            continue
        layer = node.operation
        local = _float_inputs(b, node, names)
        inputs = [local[id(t)] for t in node.input_tensors]
        if isinstance(layer, Functional):
            check_exportable(layer)
            inner = dict(zip((id(t) for t in layer._flat_inputs), inputs))
            convert_nodes(b, layer, inner)
            outs = [inner[id(t)] for t in layer._flat_outputs]
        else:
            args, kwargs = nest.map_structure(
                lambda v: local[id(v)] if isinstance(v, KerasTensor) else v,
                (list(node.call_args), dict(node.call_kwargs)))
            call = Call(b, layer, inputs, [tuple(t.shape) for t in node.input_tensors],
                        [tuple(t.shape) for t in node.output_tensors], args, kwargs,
                        masked=any(_has_mask(t) for t in node.input_tensors))
            outs = find_converter(layer)(call)
        if len(outs) != len(node.output_tensors):
            raise RuntimeError(f'The ONNX converter of layer "{layer.name}" gave {len(outs)} '
                               f"outputs for {len(node.output_tensors)} tensors.")
        for t, name in zip(node.output_tensors, outs):
            names[id(t)] = name


def _float_inputs(b, node, names):
    """{id(input tensor): ONNX name}, integer/bool/float64 inputs cast to float32 where the
    layer computes in float32 (its outputs are float32), as fkeras casts them on entry;
    Embedding keeps its integer indices."""
    from fkeras.layers.core.embedding import Embedding

    local = {id(t): names[id(t)] for t in node.input_tensors}
    if isinstance(node.operation, Embedding) or not any(
            str(t.dtype) == "float32" for t in node.output_tensors):
        return local
    for t in node.input_tensors:
        if str(t.dtype) != "float32":
            local[id(t)] = b.op("Cast", [names[id(t)]], to=1, hint=f"{t.name}_float")
    return local


def tensor_type(t):
    """The ONNX element type of a KerasTensor's dtype."""
    from onnx import helper

    return helper.np_dtype_to_tensor_dtype(np.dtype(str(t.dtype)))
