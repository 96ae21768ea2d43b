"""Drawing a model's graph: `model_to_dot` (a `pydot.Dot`) and `plot_model` (an image file).

Keras 3.15's arguments, defaults and drawing: one node per layer (an HTML table: name and
class, then optional activation, input/output shapes, output dtype, trainable), one edge per
connection between two layers of the model (drawn once however often it is used), nested
Functional/Sequential models either as one node or, with `expand_nested=True`, as a dashed
cluster of their own layers with edges reaching into it.

`pydot` (`pip install pydot`, or the `plot` extra) is imported on first use; rendering needs
Graphviz's `dot` program (the `graphviz` system package).
"""

import os
import shutil

_PYDOT_HINT = ("You must install pydot (`pip install pydot`, or `pip install "
               "\"fkeras[plot]\"`) for `{fn}` to work.")
_GRAPHVIZ_HINT = (
    "You must install Graphviz's `dot` program for `plot_model` to work: it was not found on "
    "the PATH. Install the `graphviz` system package (Debian/Ubuntu: `apt-get install "
    "graphviz`; macOS: `brew install graphviz`; conda: `conda install graphviz`), see "
    "https://graphviz.org/download/.")


def _pydot(fn):
    try:
        import pydot
    except ImportError as e:
        raise ImportError(_PYDOT_HINT.format(fn=fn)) from e
    return pydot


def _check_graphviz(pydot):
    """Raises ImportError (as Keras) when Graphviz's `dot` cannot run."""
    if shutil.which("dot") is None:
        raise ImportError(_GRAPHVIZ_HINT)
    try:
        pydot.Dot().create(format="dot")
    except (OSError, pydot.PydotException) as e:  # found but broken
        raise ImportError(f"{_GRAPHVIZ_HINT} Running it failed with: {e}") from e


def _is_model(layer):
    from fkeras.models.functional import Functional

    return isinstance(layer, Functional)


def _shape_text(tensors):
    if tensors is None:
        return "?"
    if isinstance(tensors, dict):
        return ", ".join(f"{k}: {t.shape}" for k, t in tensors.items())
    if isinstance(tensors, (list, tuple)):
        return str([tuple(t.shape) for t in tensors])
    return str(tuple(tensors.shape))


def _first(layer, attr):
    try:
        return getattr(layer, attr)
    except (AttributeError, ValueError, RuntimeError):
        return None


def _activation_name(activation):
    for attr in ("name", "__name__"):
        if isinstance(getattr(activation, attr, None), str):
            return getattr(activation, attr)
    return str(activation)


def _cell(text, color="white", font_color=None, size=14, colspan=None):
    span = f' colspan="{colspan}"' if colspan else ""
    font = f' color="{font_color}"' if font_color else ""
    return (f'<td bgcolor="{color}"{span}><font point-size="{size}"{font}>{text}'
            "</font></td>")


def _label(layer, show_shapes, show_dtype, show_layer_names, show_layer_activations,
           show_trainable):
    """The HTML-like table Graphviz draws for one layer."""
    cls = type(layer).__name__
    cols = []
    if show_shapes:
        if cls != "InputLayer":
            cols.append(_cell(f"Input shape: <b>{_shape_text(_first(layer, 'input'))}</b>"))
        cols.append(_cell(f"Output shape: <b>{_shape_text(_first(layer, 'output'))}</b>"))
    if show_dtype:
        out = _first(layer, "output")
        dtype = None
        if out is not None:
            from fkeras.utils import nest

            dtypes = [str(t.dtype) for t in nest.flatten(out)]
            dtype = dtypes[0] if len(dtypes) == 1 else str(dtypes)
        cols.append(_cell(f"Output dtype: <b>{dtype or '?'}</b>"))
    if show_trainable and layer.weights:
        if layer.trainable:
            cols.append(_cell("<b>Trainable</b>", "forestgreen", "white"))
        else:
            cols.append(_cell("<b>Non-trainable</b>", "firebrick", "white"))
    width = max(1, len(cols))
    title = f"<b>{layer.name}</b> ({cls})" if show_layer_names else f"<b>{cls}</b>"
    rows = [_cell(title, "black", "white", 16, width)]
    activation = getattr(layer, "activation", None)
    if show_layer_activations and activation is not None:
        rows.append(_cell(f"Activation: <b>{_activation_name(activation)}</b>", colspan=width))
    if cols:
        rows.append("".join(cols))
    body = "".join(f"<tr>{r}</tr>" for r in rows)
    return f'<<table border="0" cellborder="1" bgcolor="black" cellpadding="10">{body}</table>>'


def _add_node(dot, pydot, layer, options):
    node = pydot.Node(str(id(layer)), label=_label(layer, **options))
    node.set("fontname", "Helvetica")
    node.set("border", "0")
    node.set("margin", "0")
    dot.add_node(node)


def _add_edge(dot, pydot, src, dst):
    src_id, dst_id = str(id(src)), str(id(dst))
    if not dot.get_edge(src_id, dst_id):
        edge = pydot.Edge(src_id, dst_id)
        edge.set("penwidth", "2")
        dot.add_edge(edge)


def _producer(layer, tensor_index):
    """The innermost layer that computes output `tensor_index` of a nested model."""
    while _is_model(layer):
        history = layer.outputs[tensor_index]._keras_history
        layer, tensor_index = history.layer, history.tensor_index
    return layer


def _consumer(layer, input_index):
    """The innermost layer that receives input `input_index` of a nested model."""
    from fkeras.models.sequential import Sequential

    while _is_model(layer):
        if isinstance(layer, Sequential):
            layer = layer.layers[0]
        else:
            layer = layer.inputs[min(input_index, len(layer.inputs) - 1)]._keras_history.layer
            input_index = 0
    return layer


def _graph_layers(model):
    from fkeras.models.sequential import Sequential

    if isinstance(model, Sequential):
        return model.layers  # Keras draws no InputLayer for a Sequential model
    return list(getattr(model, "_graph_layers", model.layers))


def _add_edges(dot, pydot, model, layers, expand_nested):
    from fkeras.models.sequential import Sequential

    if isinstance(model, Sequential) and not expand_nested:
        for a, b in zip(layers, layers[1:]):
            _add_edge(dot, pydot, a, b)
        return
    if isinstance(model, Sequential):
        layers = layers[1:]  # the first layer's input (the InputLayer) is not drawn
    own = {id(n) for n in model._nodes}
    for layer in layers:
        for node in layer._inbound_nodes:
            if id(node) not in own:
                continue
            for input_index, history in enumerate(node.inbound_history):
                if history is None:
                    continue
                source, destination = history.layer, layer
                if expand_nested:
                    source = _producer(source, history.tensor_index)
                    destination = _consumer(destination, input_index)
                _add_edge(dot, pydot, source, destination)


def model_to_dot(model, show_shapes=False, show_dtype=False, show_layer_names=True,
                 rankdir="TB", expand_nested=False, dpi=200, subgraph=False,
                 show_layer_activations=False, show_trainable=False, splines="ortho",
                 **kwargs):
    """Converts a model to a `pydot.Dot` graph (Keras's `keras.utils.model_to_dot`).

    Args:
        model: a built fkeras model.
        show_shapes: whether to show each layer's input and output shapes.
        show_dtype: whether to show each layer's output dtype.
        show_layer_names: whether to show layer names (else class names only).
        rankdir: Graphviz `rankdir`: `"TB"` (vertical) or `"LR"` (horizontal).
        expand_nested: whether to draw nested models as clusters of their layers.
        dpi: image resolution in dots per inch.
        subgraph: whether to return a `pydot.Cluster` (used for nested models).
        show_layer_activations: whether to show the `activation` of layers that have one.
        show_trainable: whether to show whether each layer with weights is trainable.
        splines: Graphviz `splines` (edge drawing), `"ortho"` by default.

    Returns:
        A `pydot.Dot`, or a `pydot.Cluster` when `subgraph=True`.
    """
    _check_kwargs(kwargs)
    if not model.built:
        raise ValueError("This model has not yet been built. Build the model first by calling "
                         "`build()` or by calling the model on a batch of data.")
    pydot = _pydot("model_to_dot")
    if subgraph:
        dot = pydot.Cluster(style="dashed", graph_name=model.name)
        dot.set("label", model.name)
        dot.set("labeljust", "l")
    else:
        dot = pydot.Dot()
        dot.set("rankdir", rankdir)
        dot.set("concentrate", True)
        dot.set("dpi", dpi)
        dot.set("splines", splines)
        dot.set_node_defaults(shape="record")
    options = dict(show_shapes=show_shapes, show_dtype=show_dtype,
                   show_layer_names=show_layer_names,
                   show_layer_activations=show_layer_activations,
                   show_trainable=show_trainable)
    if not _is_model(model):  # a subclassed model: one node
        _add_node(dot, pydot, model, options)
        return dot
    layers = _graph_layers(model)
    for layer in layers:
        if expand_nested and _is_model(layer):
            dot.add_subgraph(model_to_dot(layer, subgraph=True, rankdir=rankdir,
                                          expand_nested=True, **options))
        else:
            _add_node(dot, pydot, layer, options)
    _add_edges(dot, pydot, model, layers, expand_nested)
    return dot


def _check_kwargs(kwargs):
    if kwargs.pop("layer_range", None) is not None:
        raise ValueError("Argument `layer_range` is no longer supported.")
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments: {kwargs}")


def plot_model(model, to_file="model.png", show_shapes=False, show_dtype=False,
               show_layer_names=False, rankdir="TB", expand_nested=False, dpi=200,
               show_layer_activations=False, show_trainable=False, splines="ortho",
               **kwargs):
    """Draws a model's graph into an image file (Keras's `keras.utils.plot_model`).

    The format follows the extension of `to_file` (`.png`, `.svg`, `.pdf`, or any format
    Graphviz writes; PNG when there is none). Needs `pydot` and Graphviz's `dot` program.

    Args:
        model: a built fkeras model.
        to_file: path of the image to write.
        show_shapes, show_dtype, show_layer_names, rankdir, expand_nested, dpi,
        show_layer_activations, show_trainable, splines: as in `model_to_dot` (note
            `show_layer_names=False` by default here, as in Keras 3).

    Returns:
        An `IPython.display.Image` of the file when IPython is installed and the format is
        PNG or JPEG (also for a name without extension, written as PNG), else None.

    Example:
    ```python
    fkeras.utils.plot_model(model, "model.png", show_shapes=True)
    ```
    """
    _check_kwargs(kwargs)
    if not model.built:
        raise ValueError("This model has not yet been built. Build the model first by calling "
                         "`build()` or by calling the model on a batch of data.")
    pydot = _pydot("plot_model")
    _check_graphviz(pydot)
    dot = model_to_dot(model, show_shapes=show_shapes, show_dtype=show_dtype,
                       show_layer_names=show_layer_names, rankdir=rankdir,
                       expand_nested=expand_nested, dpi=dpi,
                       show_layer_activations=show_layer_activations,
                       show_trainable=show_trainable, splines=splines)
    to_file = os.fspath(to_file)
    extension = os.path.splitext(to_file)[1][1:] or "png"
    dot.write(to_file, format=extension)
    embeddable = {"png": "png", "jpg": "jpeg", "jpeg": "jpeg"}.get(extension)
    if embeddable is None:  # IPython's Image shows PNG and JPEG only (Keras would raise)
        return None
    try:
        from IPython import display
    except ImportError:
        return None
    return display.Image(filename=to_file, format=embeddable)
