"""Wrapper: the base class of layers that hold another layer (Keras 3's keras.layers.Wrapper)."""

from fkeras.layers.layer import Layer


class Wrapper(Layer):
    """Abstract base class of layers that wrap another layer and augment it.

    The wrapped layer is the `layer` attribute: its weights are the wrapper's, it is saved
    nested under the `layer` key of the wrapper's config (and under `<wrapper>/layer` in
    `.keras` weight files), and `build` builds it from the wrapper's input shape.

    Args:
        layer: the `Layer` instance to wrap.

    Example:
    ```python
    class Doubled(Wrapper):
        def call(self, inputs):
            return 2 * self.layer(inputs)

    y = Doubled(Dense(4))(Input(shape=(3,)))
    ```
    """

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"Layer {layer} supplied to Wrapper isn't a supported layer type. "
                             "Please ensure wrapped layer is a valid Keras layer.")
        super().__init__(**kwargs)
        self.layer = layer

    @property
    def _fk_float_inputs(self):
        return self.layer._fk_float_inputs

    def build(self, input_shape=None):
        if not self.layer.built:
            self.layer._maybe_build([tuple(input_shape)])
        self.built = True

    def compute_output_shape(self, input_shape):
        return self.layer.compute_output_shape(input_shape)

    def get_config(self):
        from fkeras.layers.rnn.cell_calls import serialize_cell as serialize_layer

        config = super().get_config()
        config["layer"] = serialize_layer(self.layer)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from fkeras.layers.rnn.cell_calls import deserialize_cell as deserialize_layer

        config = dict(config)
        layer = deserialize_layer(config.pop("layer"), custom_objects)
        return cls(layer, **config)
