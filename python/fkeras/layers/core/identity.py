"""Identity: returns its input unchanged (masks pass through)."""

from fkeras.layers.layer import Layer


class Identity(Layer):
    """Identity layer: the output is the input (Keras 3), with its mask.

    Useful as a placeholder where a layer is expected (e.g. a projection that may be skipped).

    Example:
    ```python
    y = Identity()(Input(shape=(3,)))   # y.shape == (None, 3)
    ```
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.built = True

    def call(self, inputs):
        return inputs

    def compute_output_shape(self, input_shape):
        return input_shape
