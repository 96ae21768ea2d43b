"""Sequential: a linear stack of layers, built as soon as its input shape is known."""

import numpy as np

from fkeras.engine import naming
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.core.input_layer import InputLayer
from fkeras.layers.layer import Layer
from fkeras.models.functional import Functional
from fkeras.ops.registry import outside_symbolic_call


class Sequential(Functional):
    """`Sequential([Dense(8, input_shape=(4,)), Dense(1)])`, or `.add(layer)` one at a time.

    The input shape comes from an `Input`/`InputLayer` first element, from `input_shape` on
    the first layer, from `build(input_shape)`, or from the first call on data.
    """

    # Keras 3 checks a Sequential model's input rank only (models/data_checks.py).
    _fk_fixed_input_dims = False

    def __init__(self, layers=None, trainable=True, name=None):
        Layer.__init__(self, name=name or naming.unique_name("sequential"), trainable=trainable)
        self._stack = []
        self._input_layer = None
        self._output_tensor = None
        self.built = False
        for layer in layers or []:
            self.add(layer)

    @property
    def layers(self):
        return list(self._stack)

    def add(self, layer):
        if isinstance(layer, KerasTensor) and isinstance(
                getattr(layer._keras_history, "layer", None), InputLayer):
            layer = layer._keras_history.layer
        if not isinstance(layer, Layer):
            raise ValueError(
                "Only instances of `keras.Layer` can be added to a Sequential model. "
                f"Received: {layer} (of type {type(layer)})"
            )
        if isinstance(layer, InputLayer):
            if self._input_layer is not None or self._stack:
                raise ValueError("Sequential model: an InputLayer can only be the first layer.")
            self._input_layer = layer
            self._output_tensor = layer._output
            self._update_graph()
            return
        if self._input_layer is None and not self._stack and hasattr(layer, "_batch_input_shape"):
            self._input_layer = InputLayer(batch_shape=layer._batch_input_shape)
            self._output_tensor = self._input_layer._output
        if self._output_tensor is not None:
            with self._open_name_scope():  # Keras builds the layers in the model's build scope
                out = layer(self._output_tensor)
            if isinstance(out, (list, tuple)):
                raise ValueError(
                    "All layers in a Sequential model should have a single output tensor. For "
                    "multi-output layers, use the functional API."
                )
            self._output_tensor = out
        self._stack.append(layer)
        self._layers = list(self._stack)
        self._update_graph()

    def pop(self):
        if not self._stack:
            raise TypeError("There are no layers in the model.")
        layer = self._stack.pop()
        self._layers = list(self._stack)
        if self._output_tensor is not None:
            # Forget the popped layer's call: the new output is the previous layer's.
            for node in layer._inbound_nodes:
                for h in node.inbound_history:
                    out = h.layer._outbound_nodes
                    if node in out:
                        out.remove(node)
            layer._inbound_nodes.clear()
            self._output_tensor = (self._stack[-1]._inbound_nodes[-1].output_tensors[0]
                                   if self._stack else self._input_layer._output)
        self._update_graph()
        return layer

    def _update_graph(self):
        if self._input_layer is None or not self._stack:
            self.built = False
            return
        self._init_graph(self._input_layer._output, self._output_tensor)
        self._graph_layers = [self._input_layer] + list(self._stack)
        self._layers = list(self._stack)

    def build(self, input_shape=None):
        if self._input_layer is not None:
            if self._stack and not self.built:
                self._update_graph()
            return
        if input_shape is None:
            raise ValueError("You must provide an `input_shape` argument.")
        stack, self._stack = self._stack, []
        self._input_layer = InputLayer(batch_shape=tuple(input_shape))
        self._output_tensor = self._input_layer._output
        with outside_symbolic_call():  # its own graph, even when first called symbolically
            for layer in stack:
                self.add(layer)

    def __call__(self, *args, **kwargs):
        if not self.built and self._input_layer is None and args:
            x = args[0]
            shape = x.shape if isinstance(x, KerasTensor) else np.shape(x)
            self.build((None,) + tuple(shape[1:]))
        if not self.built:
            raise ValueError(
                "This model has not yet been built. Build the model first by calling `build()` "
                "or by calling the model on a batch of data."
            )
        return super().__call__(*args, **kwargs)

    @property
    def weights(self):
        if not self.built and not any(lyr.built for lyr in self._stack):
            return []
        return super().weights

    def get_config(self):
        from fkeras.layers import serialize_layer

        layers = []
        if self._input_layer is not None:
            layers.append(serialize_layer(self._input_layer))
        layers.extend(serialize_layer(lyr) for lyr in self._stack)
        return {"name": self.name, "trainable": self.trainable, "layers": layers}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from fkeras.layers import deserialize_layer
        from fkeras.saving.serialization_lib import build_user_layer_from_entry

        model = cls(name=config.get("name"), trainable=config.get("trainable", True))
        for entry in config["layers"]:
            model.add(build_user_layer_from_entry(deserialize_layer(entry, custom_objects),
                                                  entry))
        return model
