"""get_config / from_config for functional models (Keras 2 `inbound_nodes` lists).

Each layer entry lists its calls inside this model as lists of
[inbound_layer_name, node_index, tensor_index, kwargs], node indices counted among the inbound
layer's nodes that belong to this model; a call with several tensor arguments is written in
Keras 3's {"args", "kwargs"} form instead (models/node_config.py). from_config never mutates
the dict it is given.
"""

import copy

from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.core.input_layer import InputLayer
from fkeras.models import node_config
from fkeras.utils import nest


def _model_node_index(model_nodes, layer):
    """Maps a layer's original node indices to their index among this model's nodes."""
    mapping = {}
    for i, node in enumerate(layer._inbound_nodes):
        if id(node) in model_nodes:
            mapping[i] = len(mapping)
    return mapping


def functional_get_config(model):
    from fkeras.layers import serialize_layer

    model_nodes = {id(n) for n in model._nodes}
    maps = {}

    def index_of(layer, original):
        if id(layer) not in maps:
            maps[id(layer)] = _model_node_index(model_nodes, layer)
        return maps[id(layer)].get(original, original)

    layers = []
    for layer in model._graph_layers:
        entry = serialize_layer(layer)
        entry["name"] = layer.name
        entry["inbound_nodes"] = [node_config.serialize_node(node, index_of)
                                  for node in layer._inbound_nodes
                                  if id(node) in model_nodes and not node.is_input]
        layers.append(entry)

    def refs(tensors):
        return [[t._keras_history.layer.name, index_of(t._keras_history.layer, t._keras_history.node_index),
                 t._keras_history.tensor_index] for t in tensors]

    return {"name": model.name, "trainable": model.trainable, "layers": layers,
            "input_layers": refs(model._flat_inputs), "output_layers": refs(model._flat_outputs)}


def functional_from_config(cls, config, custom_objects=None, make_layer=None,
                           call_function=None):
    """Rebuilds a functional model from its config by replaying every layer call.

    `make_layer(entry)` gives the layer of a config entry (default: deserialize it); an entry
    it maps to a KerasTensor stands for an input layer's output (clone_model's
    `input_tensors`). `call_function(layer, *args, **kwargs)` makes the calls (default:
    `layer(*args, **kwargs)`).
    """
    from fkeras.layers import deserialize_layer
    from fkeras.saving.serialization_lib import build_user_layer_from_entry

    config = copy.deepcopy(config)
    created = {}   # layer name -> layer
    outputs = {}   # layer name -> list (per model node) of output tensor lists
    pending = []
    for entry in config["layers"]:
        layer = (make_layer or (lambda e: build_user_layer_from_entry(
            deserialize_layer(e, custom_objects), e)))(entry)
        name = entry.get("name", layer.name)
        if isinstance(layer, KerasTensor):
            outputs[name] = [[layer]]
            continue
        created[name] = layer
        outputs[name] = [list(layer._inbound_nodes[0].output_tensors)] if isinstance(layer, InputLayer) else []
        pending.extend((name, node) for node in entry.get("inbound_nodes", []))
    call = call_function or (lambda layer, *args, **kwargs: layer(*args, **kwargs))

    while pending:
        progress = False
        remaining = []
        blocked = set()  # a shared layer's calls are replayed in their original order
        for name, node in pending:
            if name not in blocked and all(len(outputs[ref[0]]) > ref[1]
                                           for ref in node_config.node_refs(node)):
                result = node_config.call_node(
                    created[name], node, lambda ref: outputs[ref[0]][ref[1]][ref[2]], call)
                flat = nest.flatten(result)  # as Node numbers output tensors
                outputs[name].append(list(flat))
                progress = True
            else:
                blocked.add(name)
                remaining.append((name, node))
        if not progress:
            raise ValueError(f"Cannot rebuild the model: unresolved layer calls {remaining}.")
        pending = remaining

    def resolve(refs):
        return [outputs[name][node][tensor] for name, node, tensor in refs]

    ins, outs = resolve(config["input_layers"]), resolve(config["output_layers"])
    return cls(inputs=ins[0] if len(ins) == 1 else ins, outputs=outs[0] if len(outs) == 1 else outs,
               name=config.get("name"), trainable=config.get("trainable", True))
