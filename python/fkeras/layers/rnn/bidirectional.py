"""Bidirectional: runs a recurrent layer forwards and a copy of it backwards, and merges."""

from fkeras import ops
from fkeras.layers.layer import Layer

_MERGE_MODES = ("sum", "mul", "ave", "concat", None)


class Bidirectional(Layer):
    """Bidirectional wrapper for RNNs (Keras 3 semantics).

    The forward layer is a copy of `layer` (from its config, named `forward_<name>`); the
    backward layer is `backward_layer` or a copy of `layer` with `go_backwards` flipped (named
    `backward_<name>`). With return_sequences the backward outputs are flipped back to the
    input's time order before merging, and masked steps output zeros in both directions
    (Keras forces `zero_output_for_mask = return_sequences` on both layers).

    Args:
        layer: a recurrent layer instance (LSTM, GRU, SimpleRNN).
        merge_mode: "concat" (default), "sum", "mul", "ave" or None (a list of both outputs).
        weights: initial weights, forward layer's then backward layer's.
        backward_layer: optional recurrent layer for the backward direction; it must have the
            opposite go_backwards and the same stateful, return_sequences, return_state.

    Call arguments:
        initial_state: forward states then backward states.
        mask, training: passed to both layers.

    Returns, with return_state, [output, forward states..., backward states...] (merge_mode
    None: [forward output, backward output, states...]).

    Example:
    ```python
    y = Bidirectional(LSTM(8, return_sequences=True))(Input(shape=(5, 3)))  # (None, 5, 16)
    ```
    """

    _fk_float_inputs = True

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None,
                 **kwargs):
        from fkeras.layers import deserialize_layer, serialize_layer

        if not isinstance(layer, Layer):
            raise ValueError("Please initialize `Bidirectional` layer with a "
                             f"`keras.layers.Layer` instance. Received: {layer}")
        if backward_layer is not None and not isinstance(backward_layer, Layer):
            raise ValueError("`backward_layer` need to be a `keras.layers.Layer` instance. "
                             f"Received: {backward_layer}")
        if merge_mode not in _MERGE_MODES:
            raise ValueError(f"Invalid merge mode. Received: {merge_mode}. Merge mode should "
                             'be one of {"sum", "mul", "ave", "concat", None}')
        super().__init__(**kwargs)
        entry = serialize_layer(layer)
        entry["config"]["name"] = "forward_" + _strip(layer.name, "forward_")
        self.forward_layer = deserialize_layer(entry)
        if backward_layer is None:
            entry = serialize_layer(layer)
            entry["config"]["go_backwards"] = not layer.go_backwards
            entry["config"]["name"] = "backward_" + _strip(layer.name, "backward_")
            backward_layer = deserialize_layer(entry)
        self.backward_layer = backward_layer
        self._verify_layer_config()
        for lyr in (self.forward_layer, self.backward_layer):
            lyr.zero_output_for_mask = lyr.return_sequences
        self.merge_mode = merge_mode
        self._pending_weights = list(weights) if weights else None
        self.stateful = layer.stateful
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        self.supports_masking = True
        self.input_spec = layer.input_spec

    def _verify_layer_config(self):
        fwd, bwd = self.forward_layer, self.backward_layer
        if fwd.go_backwards == bwd.go_backwards:
            raise ValueError("Forward layer and backward layer should have different "
                             "`go_backwards` value. Received: forward_layer.go_backwards "
                             f"{fwd.go_backwards}, backward_layer.go_backwards="
                             f"{bwd.go_backwards}")
        for a in ("stateful", "return_sequences", "return_state"):
            if getattr(fwd, a) != getattr(bwd, a):
                raise ValueError("Forward layer and backward layer are expected to have the "
                                 f'same value for attribute "{a}", got "{getattr(fwd, a)}" for '
                                 f'forward layer and "{getattr(bwd, a)}" for backward layer')

    def build(self, input_shape):
        for lyr in (self.forward_layer, self.backward_layer):
            if not lyr.built:
                lyr._maybe_build([tuple(input_shape)])
        if self._pending_weights is not None:
            n = len(self._pending_weights)
            self.forward_layer.set_weights(self._pending_weights[:n // 2])
            self.backward_layer.set_weights(self._pending_weights[n // 2:])
            self._pending_weights = None
        self.input_spec = self.forward_layer.input_spec  # built: it knows the feature size
        self.built = True

    def call(self, sequences, initial_state=None, mask=None, training=None):
        kwargs = {"mask": mask}
        if training is not None:
            kwargs["training"] = training
        fwd_state = bwd_state = None
        if initial_state is not None:
            half = len(initial_state) // 2
            fwd_state, bwd_state = list(initial_state[:half]), list(initial_state[half:])
        y = self.forward_layer._fk_call_direct(sequences, initial_state=fwd_state, **kwargs)
        y_rev = self.backward_layer._fk_call_direct(sequences, initial_state=bwd_state, **kwargs)
        states = []
        if self.return_state:
            states = list(y[1:]) + list(y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        if self.return_sequences:
            y_rev = ops.getitem(y_rev, (slice(None), slice(None, None, -1)))
        output = _merge(self.merge_mode, y, y_rev)
        if self.return_state:
            return (output if self.merge_mode is None else [output]) + states
        return output

    def compute_mask(self, inputs, previous_mask=None):
        mask = previous_mask[0] if isinstance(previous_mask, list) else previous_mask
        if self.return_sequences:
            output_mask = [mask, mask] if self.merge_mode is None else mask
        else:
            output_mask = [None, None] if self.merge_mode is None else None
        if self.return_state:
            n = self.forward_layer.n_states + self.backward_layer.n_states
            head = output_mask if isinstance(output_mask, list) else [output_mask]
            return head + [None] * n
        return output_mask

    def compute_output_shape(self, input_shape):
        out = self.forward_layer.compute_output_shape(tuple(input_shape))
        states = []
        if self.return_state:
            out, states = out[0], list(out[1:])
        if self.merge_mode == "concat":
            out = tuple(out[:-1]) + (out[-1] * 2,)
        outputs = [tuple(out), tuple(out)] if self.merge_mode is None else [tuple(out)]
        if self.return_state:
            return outputs + states + states
        return outputs if self.merge_mode is None else outputs[0]

    @property
    def states(self):
        if self.forward_layer.states and self.backward_layer.states:
            return tuple(self.forward_layer.states + self.backward_layer.states)
        return None

    def reset_states(self, states=None):
        if not self.stateful:
            raise AttributeError("Layer must be stateful.")
        self.forward_layer.reset_states()
        self.backward_layer.reset_states()

    def reset_state(self):
        self.reset_states()

    def get_config(self):
        from fkeras.layers import serialize_layer

        config = super().get_config()
        config.update({"merge_mode": self.merge_mode,
                       "layer": serialize_layer(self.forward_layer),
                       "backward_layer": serialize_layer(self.backward_layer)})
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from fkeras.layers import deserialize_layer

        config = dict(config)
        config["layer"] = deserialize_layer(config["layer"], custom_objects)
        if config.get("backward_layer") is not None:
            config["backward_layer"] = deserialize_layer(config["backward_layer"],
                                                         custom_objects)
        return cls(**config)


def _merge(mode, y, y_rev):
    if mode == "concat":
        return ops.concatenate([y, y_rev], axis=-1)
    if mode == "sum":
        return ops.add(y, y_rev)
    if mode == "ave":
        return ops.multiply(ops.add(y, y_rev), 0.5)
    if mode == "mul":
        return ops.multiply(y, y_rev)
    return [y, y_rev]


def _strip(name, prefix):
    return name[len(prefix):] if name.startswith(prefix) else name
