"""export_onnx: a Functional or Sequential model as an ONNX file (the inference graph).

The graph is built with the `onnx` package's helpers (imported here, when an export runs):
one graph input per model input, named after its Input layer, with a dynamic batch
dimension ("batch"); one graph output per model output, named after the layer that produces
it. Weights are initializers. The model is checked with `onnx.checker.check_model` and
written atomically (temporary file, fsync, rename), as every fkeras save is.
"""

DEFAULT_OPSET = 18
MIN_OPSET = 18


def _onnx_modules():
    try:
        import onnx
    except ImportError:
        raise ImportError('Exporting to ONNX needs the `onnx` package: pip install '
                          '"fkeras[onnx]" (brings onnx and onnxruntime).') from None
    return onnx


def _is_shape(value):
    return isinstance(value, (tuple, list)) and all(
        d is None or isinstance(d, int) for d in value)


def _flatten_specs(signature):
    """The leaves of a signature: objects with `.shape`, or shape tuples of ints/None."""
    if hasattr(signature, "shape") or _is_shape(signature) and not (
            isinstance(signature, list) and not signature):
        return [signature]
    if isinstance(signature, dict):
        signature = [signature[k] for k in sorted(signature)]
    if isinstance(signature, (list, tuple)):
        return [leaf for item in signature for leaf in _flatten_specs(item)]
    raise ValueError(f"`input_signature` entries must be InputSpec/KerasTensor objects or "
                     f"shape tuples. Received: {signature!r}")


def _signature_shapes(model, input_signature):
    """The shape of each graph input: the model's, or the given signature's."""
    shapes = [tuple(t.shape) for t in model._flat_inputs]
    if input_signature is None:
        return shapes
    specs = _flatten_specs(input_signature)
    if len(specs) != len(shapes):
        raise ValueError(f"`input_signature` must hold one spec per model input ({len(shapes)})."
                         f" Received {len(specs)}: {input_signature}")
    out = []
    for i, (spec, shape) in enumerate(zip(specs, shapes)):
        given = tuple(getattr(spec, "shape", spec))
        ok = len(given) == len(shape) and all(
            g is None or s is None or int(g) == int(s) for g, s in zip(given, shape))
        if not ok:
            raise ValueError(f"`input_signature` entry {i} has shape {given}, which does not "
                             f"match the model's input {i} of shape {shape}.")
        out.append(tuple(s if g is None else int(g) for g, s in zip(given, shape)))
    return out


def _value_info(helper, name, elem_type, shape):
    dims = []
    for i, d in enumerate(shape):
        dims.append(("batch" if i == 0 else f"{name}_dim{i}") if d is None else int(d))
    return helper.make_tensor_value_info(name, elem_type, dims)


def _output_names(model, taken):
    """Each output is named after the layer producing it, or "output_<i>" when that name is
    taken (an input returned as an output, a tensor returned twice)."""
    names = []
    for i, t in enumerate(model._flat_outputs):
        name = t._keras_history.layer.name
        names.append(f"output_{i}" if name in names or name in taken else name)
    return names


def build_onnx_model(model, input_signature=None, opset_version=None):
    """The `onnx.ModelProto` of a Functional/Sequential model's inference graph.

    Args:
        model: a built Functional or Sequential model.
        input_signature: optional specs (objects with `.shape`, or shape tuples), one per
            model input; a fixed size replaces a None of the model's input shape.
        opset_version: the ONNX opset (default 18; at least 18).

    Returns:
        An `onnx.ModelProto`, checked by `onnx.checker.check_model`.
    """
    onnx = _onnx_modules()
    from onnx import helper

    from fkeras import __version__
    from fkeras.export.graph_walk import check_exportable, convert_nodes, tensor_type
    from fkeras.export.onnx_builder import OnnxBuilder

    check_exportable(model)
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    highest = onnx.defs.onnx_opset_version()
    if not MIN_OPSET <= opset <= highest:
        raise ValueError(f"`opset_version` must be an integer from {MIN_OPSET} to {highest} "
                         f"(the installed onnx's newest). Received: opset_version={opset_version}")
    b = OnnxBuilder(opset)
    shapes = _signature_shapes(model, input_signature)
    graph_inputs, names = [], {}
    for t, shape in zip(model._flat_inputs, shapes):
        name = b.reserve(t._keras_history.layer.name)
        names[id(t)] = name
        graph_inputs.append(_value_info(helper, name, tensor_type(t), shape))
    out_names = [b.reserve(n) for n in _output_names(model, set(names.values()))]
    convert_nodes(b, model, names)
    graph_outputs = []
    for t, name in zip(model._flat_outputs, out_names):
        b.nodes.append(helper.make_node("Identity", [names[id(t)]], [name],
                                        name=b.fresh(f"{name}_output")))
        graph_outputs.append(_value_info(helper, name, tensor_type(t), t.shape))
    graph = helper.make_graph(b.nodes, model.name, graph_inputs, graph_outputs,
                              initializer=b.initializers)
    proto = helper.make_model(graph, producer_name="fkeras", producer_version=__version__,
                              opset_imports=[helper.make_opsetid("", opset)])
    proto.ir_version = min(proto.ir_version, 9)  # readable by onnxruntime >= 1.16
    onnx.checker.check_model(proto, full_check=True)
    return proto


def export_onnx(model, filepath, verbose=None, input_signature=None, opset_version=None,
                **kwargs):
    """Writes `model`'s inference graph to `filepath` as an ONNX file.

    Args:
        model: a built Functional or Sequential model.
        filepath: `str` or `pathlib.Path`, the file to write.
        verbose: whether to print a message once written (None: True, as Keras).
        input_signature: optional specs, one per input (see `build_onnx_model`).
        opset_version: the ONNX opset version (default 18).

    Raises:
        ValueError: a subclassed model, a layer with no ONNX conversion (named), a bad
            argument.
        ImportError: the `onnx` package is not installed.
    """
    import os

    from fkeras.saving.file_io import atomic_write

    if kwargs:
        raise ValueError(f"Unrecognized argument(s) for format='onnx': {sorted(kwargs)}. "
                         "Supported: verbose, input_signature, opset_version.")
    proto = build_onnx_model(model, input_signature, opset_version)
    data = proto.SerializeToString()

    def write(path):
        with open(path, "wb") as f:
            f.write(data)

    filepath = os.fspath(filepath)
    atomic_write(filepath, write)
    if verbose is None or verbose:
        print(f"Saved artifact at '{filepath}'.")
