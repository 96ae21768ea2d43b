"""RNN: runs any cell over the time axis of (batch, timesteps, features) inputs.

Each step is one cell call recorded on the tape (a user-written cell runs in tensor mode, so
its Python operators are differentiated). A single built-in SimpleRNNCell / LSTMCell / GRUCell
without a mask, without dropout in training and with kernel-supported activations runs its
whole sequence as one fused op (ops.simple_rnn / lstm / gru), as the SimpleRNN / LSTM / GRU
layers do; the numbers are the same as the step loop's.
"""

import numpy as np

from fkeras import activations, ops
from fkeras.backend import devices as _devices
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.layer import Layer
from fkeras.layers.rnn import cell_calls
from fkeras.layers.rnn.base_rnn import _UNROLL_ERROR
from fkeras.layers.rnn.gru_cell import GRUCell
from fkeras.layers.rnn.lstm_cell import LSTMCell
from fkeras.layers.rnn.simple_rnn_cell import SimpleRNNCell
from fkeras.layers.rnn.stacked_rnn_cells import StackedRNNCells
from fkeras.ops.rnn import recurrent_code
from fkeras.utils import nest


class RNN(Layer):
    """Base recurrent layer: runs `cell` step by step (Keras 3).

    Args:
        cell: an RNN cell (built-in, a Layer subclass, or any object with `call(inputs,
            states)` returning `(output, new_states)` and a `state_size` int or list of ints;
            optional `output_size`, `get_initial_state(batch_size)`), or a list of cells
            (wrapped in StackedRNNCells).
        return_sequences: return the whole output sequence (batch, timesteps, output_size).
        return_state: also return the final states.
        go_backwards: process the sequence in reverse (outputs in processing order).
        stateful: the final states of a call are the next call's initial states (static
            batch size needed); `reset_state()` zeroes them.
        unroll: accepted (the loop is always a Python loop).
        zero_output_for_mask: masked steps output zeros instead of the previous output.

    Call arguments:
        sequences: (batch, timesteps, ...). initial_state: the cell's states.
        mask: (batch, timesteps) booleans: a masked step keeps the states and repeats the
            previous output. training: passed to the cell when its `call` takes it.

    Example:
    ```python
    class MinimalCell(Layer):
        def __init__(self, units):
            super().__init__()
            self.units = self.state_size = units
        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], self.units))
            self.u = self.add_weight(shape=(self.units, self.units))
        def call(self, inputs, states):
            h = ops.matmul(inputs, self.w) + ops.matmul(states[0], self.u)
            return h, [h]

    y = RNN(MinimalCell(4))(Input(shape=(10, 3)))   # (None, 4)
    ```
    """

    _fk_float_inputs = True

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, zero_output_for_mask=False, **kwargs):
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell)
        if "call" not in dir(cell):
            raise ValueError(f"Argument `cell` should have a `call` method. Received: "
                             f"cell={cell}")
        if "state_size" not in dir(cell):
            raise ValueError("The RNN cell should have a `state_size` attribute (single "
                             "integer or list of integers, one integer per RNN state). "
                             f"Received: cell={cell}")
        super().__init__(**kwargs)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self.cell = cell
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards, self.stateful, self.unroll = bool(go_backwards), bool(stateful), \
            bool(unroll)
        self.supports_masking = True
        self.states = None
        state_size = getattr(cell, "state_size", None)
        if not isinstance(state_size, (list, tuple, int)):
            raise ValueError("state_size must be an integer, or a list/tuple of integers (one "
                             "for each state tensor).")
        self.state_size = [state_size] if isinstance(state_size, int) else list(state_size)

    # ---- building ----
    def build(self, sequences_shape, initial_state_shape=None):
        sequences_shape = tuple(sequences_shape)
        if len(sequences_shape) < 3:
            raise ValueError(f'Input 0 of layer "{self.name}" is incompatible with the layer: '
                             f"expected ndim>=3, found ndim={len(sequences_shape)}. Full "
                             f"shape received: {sequences_shape}")
        step_shape = (sequences_shape[0],) + sequences_shape[2:]
        if isinstance(self.cell, Layer) and not self.cell.built:
            self.cell.build(step_shape)
            self.cell.built = True
        if self.stateful:
            if sequences_shape[0] is None:
                raise ValueError("When using `stateful=True` in a RNN, the batch size must be "
                                 "static. Found dynamic batch size: sequence.shape="
                                 f"{sequences_shape}")
            self.states = self._as_list(self.get_initial_state(sequences_shape[0]))
        self.built = True

    def get_initial_state(self, batch_size):
        if getattr(self.cell, "get_initial_state", None) is not None:
            return self._as_list(cell_calls.initial_state(self.cell, batch_size))
        return [np.zeros((batch_size, d), np.float32) for d in self.state_size]

    @staticmethod
    def _as_list(states):
        return list(states) if nest.is_nested(states) else [states]

    def reset_state(self):
        """Zeroes the states of a stateful layer."""
        if self.states is not None:
            self.states = nest.map_structure(np.zeros_like, self.states)

    def reset_states(self):
        self.reset_state()

    # ---- calling ----
    def call(self, sequences, initial_state=None, mask=None, training=False):
        if self.unroll and sequences.shape[1] is None:
            raise ValueError(_UNROLL_ERROR)
        if isinstance(sequences, KerasTensor):
            return self._symbolic_outputs(sequences)
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        N = sequences.shape[0]
        if initial_state is None:
            states = list(self.states) if self.stateful else self.get_initial_state(N)
        else:
            states = self._as_list(initial_state)
            if self.stateful and self.states is not None and \
                    np.shape(nest.flatten(self.states)[0])[0] != N:
                raise ValueError("If an RNN is stateful, the batch size of the input "
                                 "sequences must be the same as the batch size of the initial "
                                 f"state. \n- Expected batch size: "
                                 f"{np.shape(nest.flatten(self.states)[0])[0]}\n"
                                 f"- Received batch size: {N}")
        if self.stateful and np.shape(nest.flatten(states)[0])[0] != N:
            raise ValueError("If an RNN is stateful, the batch size of the input sequences "
                             "must be the same as the batch size of the initial state. \n"
                             f"- Expected batch size: {np.shape(nest.flatten(states)[0])[0]}"
                             f"\n- Received batch size: {N}")
        fused = self._fused_op(mask, training)
        try:
            if fused is not None:
                outputs, last, states = fused(sequences, states)
            else:
                outputs, last, states = self._loop(sequences, states, mask, training)
        finally:
            for reset in ("reset_dropout_mask", "reset_recurrent_dropout_mask"):
                if hasattr(self.cell, reset):
                    getattr(self.cell, reset)()
        if self.stateful:
            self.states = nest.map_structure(
                lambda s: np.array(_devices.host_array(s), np.float32), states)
        output = outputs if self.return_sequences else last
        return [output] + list(states) if self.return_state else output

    def _loop(self, sequences, states, mask, training):
        T = sequences.shape[1]
        keep = None if mask is None else _devices.host_array(mask, bool)
        if keep is not None and keep.shape != tuple(sequences.shape[:2]):
            raise ValueError(f'Layer "{self.name}": the mask must have shape (batch, '
                             f"timesteps) = {tuple(sequences.shape[:2])}, received "
                             f"{keep.shape}.")
        prev_out, outs = None, []
        for t in (range(T - 1, -1, -1) if self.go_backwards else range(T)):
            x_t = ops.getitem(sequences, (slice(None), t))
            out, new_states = cell_calls.step(self.cell, x_t, states, training)
            if keep is not None:
                k = keep[:, t:t + 1].astype(np.float32)
                flat = [_blend(k, s1, s0) for s1, s0 in
                        zip(nest.flatten(new_states), nest.flatten(states))]
                new_states = nest.pack_like(new_states, flat)
                if self.zero_output_for_mask:
                    out = ops.multiply(k, out)
                else:
                    prev = np.zeros(tuple(out.shape), np.float32) if prev_out is None \
                        else prev_out
                    out = _blend(k, out, prev)
            states, prev_out = new_states, out
            if self.return_sequences:
                outs.append(ops.expand_dims(out, 1))
        outputs = ops.concatenate(outs, axis=1) if self.return_sequences else None
        return outputs, prev_out, list(states)

    # ---- the fused path for a single built-in cell ----
    def _fused_op(self, mask, training):
        cell = self.cell
        if mask is not None or type(cell) not in (SimpleRNNCell, LSTMCell, GRUCell):
            return None
        if training and (cell.dropout > 0 or cell.recurrent_dropout > 0):
            return None
        try:
            act = recurrent_code(activations.serialize(cell.activation))
            rec = recurrent_code(activations.serialize(cell.recurrent_activation)) \
                if hasattr(cell, "recurrent_activation") else None
        except (ValueError, TypeError):
            return None
        back = self.go_backwards

        def run(x, states):
            if type(cell) is LSTMCell:
                hs, h, c = ops.lstm(x, states[0], states[1], cell.kernel,
                                    cell.recurrent_kernel, cell.bias, go_backwards=back,
                                    activation=act, recurrent_activation=rec)
                return hs, h, [h, c]
            if type(cell) is GRUCell:
                hs, h = ops.gru(x, states[0], cell.kernel, cell.recurrent_kernel, cell.bias,
                                go_backwards=back, reset_after=cell.reset_after,
                                activation=act, recurrent_activation=rec)
                return hs, h, [h]
            hs, h = ops.simple_rnn(x, states[0], cell.kernel, cell.recurrent_kernel,
                                   cell.bias, go_backwards=back, activation=act)
            return hs, h, [h]

        return run

    # ---- shapes, masks, config ----
    def _symbolic_outputs(self, sequences):
        shapes = self.compute_output_shape(tuple(sequences.shape))
        if not self.return_state:
            return KerasTensor(shapes, sequences.dtype)

        def tensors(s):  # tuples are shapes, lists are structure
            return [tensors(x) for x in s] if isinstance(s, list) else \
                KerasTensor(s, sequences.dtype)

        return tensors(shapes)

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        """The output shape, then (with return_state) one shape per entry of `state_size`
        (a list of shapes for a StackedRNNCells cell with several states), as Keras 3."""
        batch, length = sequences_shape[0], sequences_shape[1]
        out_size = cell_calls.output_size(self.cell)
        if not isinstance(out_size, int):
            raise ValueError("output_size must be an integer.")
        output = (batch, length, out_size) if self.return_sequences else (batch, out_size)
        if not self.return_state:
            return output
        states = [(batch, size) if isinstance(size, int) else [(batch, s) for s in size]
                  for size in self.state_size]
        return [output] + states

    def compute_mask(self, inputs, previous_mask=None):
        mask = nest.flatten(previous_mask)[0] if previous_mask is not None else None
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            return [output_mask] + [None] * len(self.state_size)
        return output_mask

    def get_config(self):
        config = super().get_config()
        config.update({
            "return_sequences": self.return_sequences,
            "return_state": self.return_state,
            "go_backwards": self.go_backwards,
            "stateful": self.stateful,
            "unroll": self.unroll,
            "zero_output_for_mask": self.zero_output_for_mask,
            "cell": cell_calls.serialize_cell(self.cell),
        })
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        cell = cell_calls.deserialize_cell(config.pop("cell"), custom_objects)
        return cls(cell, **config)


def _blend(keep, new, old):
    """keep * new + (1 - keep) * old, keep (N, 1) of 0/1 floats."""
    return ops.add(ops.multiply(keep, new), ops.multiply(1.0 - keep, old))
