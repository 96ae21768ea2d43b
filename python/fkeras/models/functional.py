"""Functional: a Model over a graph of layer calls, from its input tensors to its outputs.

Construction walks the graph back from the outputs (iteratively), orders the nodes by depth as
Keras does, and checks that every path starts at one of the given inputs. Calling the model runs
the same nodes in topological order on arrays (eager) or on KerasTensors (symbolic, when the
model is nested in another graph).
"""

import numpy as np

from fkeras.engine import naming
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.engine.masking import get_keras_mask, set_keras_mask
from fkeras.layers.core.input_layer import InputLayer
from fkeras.layers import layer as _layer_module
from fkeras.layers.layer import Layer
from fkeras.models import eager_fast_path
from fkeras.models.data_checks import fit_input_rank
from fkeras.models.model import Model
from fkeras.utils import nest


def _accepts(layer, arg):
    """Whether `layer.call` takes the keyword `arg`."""
    return layer._call_accepts(arg)


class Functional(Model):
    """A model defined by `Model(inputs, outputs)`."""

    def __init__(self, inputs, outputs, name=None, trainable=True, **kwargs):
        Layer.__init__(self, name=name or naming.unique_name("functional"), trainable=trainable,
                       **kwargs)
        self._init_graph(inputs, outputs)

    # ---- graph construction ----
    def _init_graph(self, inputs, outputs):
        self._inputs_structure = inputs
        self._outputs_structure = outputs
        flat_in = nest.flatten(inputs)
        flat_out = nest.flatten(outputs)
        _check_inputs(inputs, flat_in)
        _check_outputs(flat_out)
        self._flat_inputs = flat_in
        self._flat_outputs = flat_out
        nodes, depth_of_node, layers = _map_graph(flat_in, flat_out)
        self._nodes = nodes  # topological order, input-layer nodes included
        self._node_depths = depth_of_node
        self._graph_layers = layers
        self._layers = list(layers)
        self._check_names()
        self.built = True

    def _check_names(self):
        seen = {}
        for layer in self._graph_layers:
            seen[layer.name] = seen.get(layer.name, 0) + 1
        for name, count in seen.items():
            if count > 1:
                raise ValueError(
                    f'The name "{name}" is used {count} times in the model. All layer names '
                    "should be unique."
                )

    # ---- Keras attributes ----
    @property
    def inputs(self):
        return list(self._flat_inputs)

    @property
    def outputs(self):
        return list(self._flat_outputs)

    @property
    def input(self):
        return self._inputs_structure

    @property
    def output(self):
        return self._outputs_structure

    @property
    def input_names(self):
        return [t._keras_history.layer.name for t in self._flat_inputs]

    @property
    def output_names(self):
        return [t._keras_history.layer.name for t in self._flat_outputs]

    @property
    def input_shape(self):
        shapes = [t.shape for t in self._flat_inputs]
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def output_shape(self):
        shapes = [t.shape for t in self._flat_outputs]
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def layers(self):
        return list(self._graph_layers)

    # ---- running ----
    def __call__(self, *args, **kwargs):
        # An eligible eager call skips `Layer.__call__`'s generic argument handling too.
        fast = eager_fast_path.prepare(self, args, kwargs)
        if fast is not None and fast[2] in fast[0].signatures:
            return eager_fast_path.run(fast[0], fast[1], fast[3])
        return Layer.__call__(self, *args, **kwargs)

    def call(self, inputs, training=None, mask=None):
        if mask is not None:
            inputs = _with_masks(inputs, mask)
        return self._run_graph(inputs, training)

    def _run_graph(self, inputs, training=None):
        flat = _flatten_inputs_like(inputs, self._inputs_structure, len(self._flat_inputs))
        if len(flat) != len(self._flat_inputs):
            raise ValueError(
                f'Model "{self.name}" expects {len(self._flat_inputs)} input(s), but it received '
                f"{len(flat)} input tensors."
            )
        values = {id(t): _fit_rank(v, t) for t, v in zip(self._flat_inputs, flat)}
        for node in self._nodes:
            if node.is_input:
                continue
            args, kwargs = nest.map_structure(
                lambda t: values[id(t)] if isinstance(t, KerasTensor) else t,
                (list(node.call_args), dict(node.call_kwargs)))
            layer = node.operation
            # Keras 3: the model's training value overrides one recorded in the node (a
            # Keras file records the call default, e.g. RandomFlip's training=True).
            if training is not None and _accepts(layer, "training"):
                kwargs["training"] = training
            out = layer(*args, **kwargs)
            for t, v in zip(node.output_tensors, nest.flatten(out)):
                values[id(t)] = v
        return nest.pack_like(self._outputs_structure,
                              [values[id(t)] for t in self._flat_outputs])

    def _eager_call(self, args, kwargs, flat):
        from fkeras.models.data_checks import check_model_inputs

        fast = eager_fast_path.prepare(self, args, kwargs)  # (not taken in `__call__`)
        check_model_inputs(self, flat)
        if not _layer_module.in_layer_call():
            self._clear_losses()
        with _layer_module.layer_call_scope():
            out = self.call(*args, **kwargs)
        if fast is not None:
            eager_fast_path.remember(fast[0], fast[2])
        return out

    def build(self, input_shape):
        self.built = True

    def add_loss(self, loss):
        """Keras 2's `model.add_loss(symbolic_tensor)` on a functional model is refused, as
        Keras 3 refuses it: nothing would compute that tensor during training, so the loss
        would be silently left out. Add the loss in a layer's `call` instead."""
        if any(isinstance(t, KerasTensor) for t in nest.flatten(loss)):
            raise NotImplementedError(
                f'Model "{self.name}": `add_loss` on a functional model with a symbolic '
                "tensor (Keras 2's functional add_loss) is not supported, as in Keras 3: the "
                "tensor is not computed during training. Call `self.add_loss(...)` inside "
                "the `call` of a layer of the model instead.")
        super().add_loss(loss)

    def reset_states(self):
        """Keras 2's `model.reset_states()`: zeroes the states of every stateful layer."""
        for layer in self._all_layers():
            if getattr(layer, "stateful", False) and hasattr(layer, "reset_states"):
                layer.reset_states()

    # ---- config ----
    def get_config(self):
        from fkeras.models.functional_config import functional_get_config

        return functional_get_config(self)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from fkeras.models.functional_config import functional_from_config

        return functional_from_config(cls, config, custom_objects)


def _with_masks(inputs, mask):
    """Inputs carrying the given mask(s) (Keras 3's `model(x, mask=m)`), as views so the
    caller's arrays stay untagged."""
    flat_in, flat_mask = nest.flatten(inputs), nest.flatten(mask)
    if len(flat_mask) != len(flat_in):
        flat_mask = [mask] + [None] * (len(flat_in) - 1)
    tagged = []
    for x, m in zip(flat_in, flat_mask):
        if m is not None:
            x = x if isinstance(x, KerasTensor) else np.asarray(x).view()
            set_keras_mask(x, m)
        tagged.append(x)
    return nest.pack_like(inputs, tagged) if isinstance(inputs, (list, tuple, dict)) \
        else tagged[0]


def _fit_rank(value, tensor):
    """An input value with one trailing 1 squeezed or added to match its Input's rank (Keras
    3 does this in a Functional call), keeping its Keras mask."""
    if not hasattr(value, "shape") or len(value.shape) == len(tensor.shape):
        return value
    fitted = fit_input_rank(value, tensor.shape)
    mask = get_keras_mask(value) if fitted is not value else None
    if mask is not None:
        set_keras_mask(fitted, mask)
    return fitted


def _flatten_inputs_like(inputs, structure, count):
    if isinstance(inputs, dict) and not isinstance(structure, dict):
        # Inputs keyed by input-layer name, as Keras allows.
        names = [t._keras_history.layer.name for t in nest.flatten(structure)]
        missing = [n for n in names if n not in inputs]
        if missing:
            raise ValueError(f"Missing data for input(s) {missing}. Expected keys: {names}.")
        return [inputs[n] for n in names]
    flat = nest.flatten(inputs)
    if count == 1 and len(flat) != 1 and not isinstance(inputs, (list, tuple, dict)):
        return [inputs]
    return flat


def _check_inputs(inputs, flat):
    for t in flat:
        if not isinstance(t, KerasTensor):
            raise ValueError(
                "All `inputs` values must be KerasTensors. Received: "
                f"inputs={inputs} including invalid value {t} of type {type(t)}"
            )
        h = t._keras_history
        if h is None or not isinstance(h.layer, InputLayer):
            raise ValueError(
                "Input tensors to a Model must come from `fkeras.Input` (an InputLayer). "
                f"Received: {t} (missing previous layer metadata)."
            )
    if len({id(t) for t in flat}) != len(flat):
        raise ValueError(
            "The list of inputs passed to the model contains the same input multiple times. "
            f"All inputs should only appear once. Received inputs={inputs}"
        )


def _check_outputs(flat):
    for t in flat:
        if not isinstance(t, KerasTensor) or t._keras_history is None:
            raise ValueError(
                "Output tensors of a Functional model must be the output of a Keras `Layer` "
                f"(thus holding past layer metadata). Found: {t}"
            )


def _map_graph(inputs, outputs):
    """Nodes in topological order, node depths and layers ordered as Keras orders them."""
    input_ids = {id(t) for t in inputs}
    # Iterative post-order DFS from the outputs; model inputs are leaves.
    order, state = [], {}
    for out in outputs:
        h = out._keras_history
        stack = [(h.layer._inbound_nodes[h.node_index], False)]
        while stack:
            node, expanded = stack.pop()
            key = id(node)
            if expanded:
                if state.get(key) != "done":
                    state[key] = "done"
                    order.append(node)
                continue
            if state.get(key) == "done":
                continue
            if state.get(key) == "open":
                raise ValueError(f'The tensor graph has a cycle at layer "{node.operation.name}".')
            state[key] = "open"
            stack.append((node, True))
            for t in reversed(node.input_tensors):
                if id(t) in input_ids:
                    hi = t._keras_history
                    parent = hi.layer._inbound_nodes[hi.node_index]
                    if state.get(id(parent)) != "done":
                        state[id(parent)] = "done"
                        order.append(parent)
                    continue
                hi = t._keras_history
                parent = hi.layer._inbound_nodes[hi.node_index]
                if state.get(id(parent)) != "done":
                    stack.append((parent, False))

    # Depths (Keras 2's rule): outputs at 0, parents deeper; a shared layer's nodes share depth.
    node_depth, layer_depth = {}, {}
    for node in reversed(order):
        depth = max(node_depth.setdefault(id(node), 0), layer_depth.get(id(node.operation), 0))
        layer_depth[id(node.operation)] = depth
        node_depth[id(node)] = depth
        for parent in node.parent_nodes:
            node_depth[id(parent)] = max(depth + 1, node_depth.get(id(parent), 0))

    # Every path must start at a model input.
    computable = set(input_ids)
    done_layers = []
    for node in sorted(order, key=lambda n: -node_depth[id(n)]):
        if node.is_input:
            continue  # an input not among `inputs` is reported by its consumer below
        for t in node.input_tensors:
            if id(t) not in computable:
                raise ValueError(
                    f"Graph disconnected: cannot obtain value for tensor {t} at layer "
                    f'"{node.operation.name}". The following previous layers were accessed '
                    f"without issue: {done_layers}"
                )
        computable.update(id(t) for t in node.output_tensors)
        done_layers.append(node.operation.name)

    # Layers: by decreasing depth, ties in discovery (post-order) order; each layer once.
    position = {}
    for node in order:
        position.setdefault(id(node.operation), len(position))
    layers, seen = [], set()
    for t in inputs:  # input layers first, in the order of `inputs`
        layer = t._keras_history.layer
        if id(layer) not in seen:
            seen.add(id(layer))
            layers.append(layer)
    by_depth = sorted({id(n.operation): n.operation for n in order}.values(),
                      key=lambda lyr: (-layer_depth[id(lyr)], position[id(lyr)]))
    for layer in by_depth:
        if id(layer) not in seen:
            seen.add(id(layer))
            layers.append(layer)
    return order, node_depth, layers
