"""TimeDistributed: applies one layer to every temporal slice of a (batch, time, ...) input."""

from fkeras import ops
from fkeras.engine.input_spec import check_input_spec
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.layer import Layer


class TimeDistributed(Layer):
    """Applies `layer` to every time step (axis 1) of the input, with the same weights.

    The time axis is folded into the batch: the wrapped layer runs once on
    (batch * time, ...) and the result is unfolded to (batch, time, ...). This equals Keras 3's
    per-step loop for every layer whose output for one sample does not depend on the other
    samples; a layer that computes batch statistics in training (BatchNormalization) sees
    batch * time samples at once, as Keras 2 did, instead of one time step at a time.

    Args:
        layer: a Layer instance.

    Call arguments:
        mask: (batch, time) boolean; passed on (folded) when the wrapped layer's `call` takes
            `mask`; the output carries it.
        training: passed on when the wrapped layer's `call` takes it.

    Example:
    ```python
    y = TimeDistributed(Dense(8))(Input(shape=(10, 16)))                  # (None, 10, 8)
    y = TimeDistributed(Conv2D(4, 3))(Input(shape=(5, 32, 32, 3)))        # (None, 5, 30, 30, 4)
    ```
    """

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError("Please initialize `TimeDistributed` layer with a "
                             f"`keras.layers.Layer` instance. Received: {layer}")
        super().__init__(**kwargs)
        self.layer = layer
        self.supports_masking = True

    @property
    def _fk_float_inputs(self):
        """Integer inputs are cast when the wrapped layer computes in floating point."""
        return self.layer._fk_float_inputs

    def _child_input_shape(self, input_shape):
        input_shape = tuple(input_shape)
        if len(input_shape) < 3:
            raise ValueError("`TimeDistributed` Layer should be passed an `input_shape` with at "
                             f"least 3 dimensions, received: {input_shape}")
        return (input_shape[0],) + input_shape[2:]

    def build(self, input_shape):
        child = self._child_input_shape(input_shape)
        if not self.layer.built:
            self.layer._maybe_build([child])
        self.built = True

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        out = tuple(self.layer.compute_output_shape(self._child_input_shape(input_shape)))
        return (out[0], input_shape[1]) + out[1:]

    def call(self, inputs, training=None, mask=None):
        shape = inputs.shape
        if mask is not None:
            mshape = tuple(mask.shape)
            if len(mshape) < 2:
                raise ValueError("The `mask` passed to the `TimeDistributed` layer must be at "
                                 "least 2D (e.g., `(batch_size, timesteps)`), but it has "
                                 f"{len(mshape)} dimension(s) with shape {mshape}.")
            if any(a is not None and b is not None and a != b
                   for a, b in zip(shape[:2], mshape[:2])):
                raise ValueError(f"The `mask` passed to the `TimeDistributed` layer has a shape "
                                 f"{mshape} that is incompatible with the input shape {shape}. "
                                 "The first two dimensions of the mask (batch size and "
                                 "timesteps) must match the input's first two dimensions. "
                                 f"Expected mask shape prefix: ({shape[0]}, {shape[1]}).")
        if isinstance(inputs, KerasTensor):
            out = self.compute_output_shape(shape)
            return KerasTensor(out, inputs.dtype)
        self._child_input_shape(shape)  # rank >= 3
        N, T = shape[0], shape[1]
        # The wrapped layer's `call` runs directly: check its input spec on a time step here.
        check_input_spec(self.layer.input_spec, [(N * T,) + tuple(shape[2:])], self.layer.name)
        kwargs = {}
        if training is not None and self.layer._call_accepts("training"):
            kwargs["training"] = training
        if mask is not None and self.layer._call_accepts("mask"):
            kwargs["mask"] = mask.reshape((N * T,) + tuple(mask.shape[2:]))
        y = self.layer._fk_call_direct(ops.reshape(inputs, (N * T,) + tuple(shape[2:])), **kwargs)
        return ops.reshape(y, (N, T) + tuple(y.shape[1:]))

    def compute_mask(self, inputs, previous_mask=None):
        return previous_mask

    def get_config(self):
        from fkeras.layers import serialize_layer

        config = super().get_config()
        config["layer"] = serialize_layer(self.layer)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from fkeras.layers import deserialize_layer

        config = dict(config)
        config["layer"] = deserialize_layer(config["layer"], custom_objects)
        return cls(**config)
