"""Pipeline: applies a list of layers in order, as one plain layer (Keras 3's Pipeline)."""

from fkeras.engine.masking import get_keras_mask
from fkeras.layers.layer import Layer
from fkeras.utils import nest


class Pipeline(Layer):
    """Applies a series of layers to an input (Keras 3.15's keras.layers.Pipeline).

    Unlike `Sequential` it is not a Model: a plain layer whose weights are its layers'
    weights, saved under `<pipeline>/layers/<layer>` as Keras does. Each layer receives
    `training` when its `call` takes it, and the mask the previous layer attached when its
    `call` takes `mask`.

    Args:
        layers: a list of layers.
        name: the layer's name.

    Call arguments:
        inputs: the input of the first layer. training: default True, as Keras (so
            augmentation layers are active when the pipeline is called directly).
        mask: passed to the first layer that takes one.

    Example:
    ```python
    pipeline = Pipeline([Rescaling(1 / 255), Dense(8)])
    y = pipeline(images)
    ```
    """

    def __init__(self, layers, name=None):
        super().__init__(name=name)
        layers = list(layers)
        for layer in layers:
            if not isinstance(layer, Layer):
                raise ValueError(f"`Pipeline` takes a list of layers. Received: {layer!r}")
            self._layers.append(layer)
        self._pipeline_layers = layers
        self._graph_layers = layers  # `.keras` weight paths: <pipeline>/layers/<layer>

    @property
    def layers(self):
        return self._pipeline_layers

    def build(self, input_shape=None):
        self.built = True

    def call(self, inputs, training=True, mask=None):
        outputs = inputs
        for layer in self._pipeline_layers:
            kwargs = {}
            if layer._call_accepts("mask") and mask is not None:
                kwargs["mask"] = mask
            if layer._call_accepts("training") and training is not None:
                kwargs["training"] = training
            outputs = layer(inputs, **kwargs)
            inputs = outputs
            mask = nest.map_structure(get_keras_mask, outputs)
            if all(m is None for m in nest.flatten(mask)):
                mask = None
        return outputs

    def compute_output_shape(self, input_shape):
        for layer in self._pipeline_layers:
            input_shape = layer.compute_output_shape(input_shape)
        return input_shape

    def get_config(self):
        from fkeras.layers.rnn.cell_calls import serialize_cell as serialize_layer

        return {"layers": [serialize_layer(layer) for layer in self._pipeline_layers],
                "name": self.name}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from fkeras.layers.rnn.cell_calls import deserialize_cell as deserialize_layer

        layers = config.get("layers")
        if not isinstance(layers, (list, tuple)):
            raise ValueError("`Pipeline` config must contain a `layers` key mapping to a list "
                             f"of serialized layers. Received config with layers={layers}.")
        config = dict(config)
        config["layers"] = [deserialize_layer(x, custom_objects) for x in layers]
        return cls(**config)
