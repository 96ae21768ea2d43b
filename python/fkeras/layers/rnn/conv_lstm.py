"""ConvLSTM: the body of ConvLSTM1D/2D/3D (Keras 3's ConvLSTM over a ConvLSTMCell).

The input-to-gates convolution of every time step is ONE convolution call (time folded into
the batch: (N * T, ...) through the conv kernel, bias fused); each step then runs one recurrent
convolution (stride 1, "same") and the gate arithmetic, all ops on the tape, so the layer is
differentiable end to end. The weights live in the `cell` sub-layer, as Keras 3 (`.keras` weight
path `<layer>/cell/vars`).
"""

import numpy as np

from fkeras import activations, ops, regularizers
from fkeras.backend import devices as _devices
from fkeras.engine.input_spec import InputSpec
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.layer import Layer
from fkeras.layers.rnn.base_rnn import _UNROLL_ERROR
from fkeras.layers.rnn.conv_lstm_cell import ConvLSTMCell
from fkeras.layers.weight_args import serialize_weight_args

_CELL_ARGS = ("filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate",
              "activation", "recurrent_activation", "use_bias", "kernel_initializer",
              "recurrent_initializer", "bias_initializer", "unit_forget_bias",
              "kernel_regularizer", "recurrent_regularizer", "bias_regularizer",
              "kernel_constraint", "recurrent_constraint", "bias_constraint", "dropout",
              "recurrent_dropout", "seed")


def layer_args(local_vars):
    """The ConvLSTM constructor arguments among a subclass's `locals()`."""
    return {k: v for k, v in local_vars.items() if k not in ("self", "kwargs", "__class__")}


class ConvLSTM(Layer):
    """N-D convolutional LSTM (N = `rank`); see ConvLSTM1D, ConvLSTM2D, ConvLSTM3D."""

    _fk_float_inputs = True
    rank = None

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, activation="tanh", recurrent_activation="sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, seed=None, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, unroll=False, zero_output_for_mask=False,
                 **kwargs):
        super().__init__(**kwargs)
        args = dict(locals())
        self.cell = ConvLSTMCell(self.rank, **{k: args[k] for k in _CELL_ARGS},
                                 name="conv_lstm_cell")
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards, self.stateful = bool(go_backwards), bool(stateful)
        self.unroll, self.zero_output_for_mask = bool(unroll), bool(zero_output_for_mask)
        self.supports_masking = True
        self.states = None
        self.input_spec = InputSpec(ndim=self.rank + 3)

    def __getattr__(self, name):
        # Keras's ConvLSTM exposes the cell's arguments as properties.
        if name in _CELL_ARGS and "cell" in self.__dict__:
            return getattr(self.__dict__["cell"], name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    # ---- building ----
    def build(self, sequences_shape, initial_state_shape=None):
        shape = tuple(sequences_shape)
        if len(shape) != self.rank + 3:
            raise ValueError(f'Input 0 of layer "{self.name}" is incompatible with the layer: '
                             f"expected ndim={self.rank + 3}, found ndim={len(shape)}. Full "
                             f"shape received: {shape}")
        if not self.cell.built:
            self.cell.build((shape[0],) + shape[2:])
        if self.stateful:
            if shape[0] is None:
                raise ValueError("When using `stateful=True` in a RNN, the batch size must be "
                                 f"static. Found dynamic batch size: sequence.shape={shape}")
            self.states = self.cell.get_initial_state(shape[0])
        self.built = True

    def reset_state(self):
        """Zeroes the states of a stateful layer."""
        if self.states is not None:
            self.states = [np.zeros_like(s) for s in self.states]

    def reset_states(self):
        self.reset_state()

    # ---- calling ----
    def call(self, sequences, initial_state=None, mask=None, training=False):
        if self.unroll and sequences.shape[1] is None:
            raise ValueError(_UNROLL_ERROR)
        if isinstance(sequences, KerasTensor):
            return self._symbolic(sequences)
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        N, T = sequences.shape[0], sequences.shape[1]
        states = self._initial(initial_state, N)
        cell = self.cell
        step_shape = tuple(sequences.shape[2:])
        input_masks = rec_masks = None
        if training and 0.0 < cell.dropout < 1.0:
            input_masks = [m.reshape((N, 1) + step_shape)
                           for m in cell.dropout_masks((N,) + step_shape, cell.dropout)]
        if training and 0.0 < cell.recurrent_dropout < 1.0:
            rec_masks = cell.dropout_masks(tuple(np.shape(states[0])), cell.recurrent_dropout)
        if input_masks is None:
            zx = cell.project(ops.reshape(sequences, (N * T,) + step_shape))
        else:
            zx = self._masked_projection(sequences, input_masks, N, T, step_shape)
        zx = ops.reshape(zx, (N, T) + tuple(zx.shape[1:]))
        outputs, last, states = self._loop(zx, states, mask, rec_masks)
        if self.stateful:
            self.states = [np.array(_devices.host_array(s), np.float32) for s in states]
        output = outputs if self.return_sequences else last
        return [output] + list(states) if self.return_state else output

    def _masked_projection(self, sequences, input_masks, N, T, step_shape):
        """Per-gate input dropout: one folded convolution per gate, masks shared over time."""
        cell, F = self.cell, self.cell.filters
        blocks = []
        for g in range(4):
            x = ops.reshape(ops.multiply(sequences, input_masks[g]), (N * T,) + step_shape)
            bias = None if cell.bias is None else ops.getitem(cell.bias, slice(g * F, (g + 1) * F))
            blocks.append(cell.conv(x, cell.kernel_block(cell.kernel, g), bias))
        return ops.concatenate(blocks, axis=cell.channel_axis)

    def _initial(self, initial_state, N):
        if initial_state is None:
            if self.stateful and self.states is not None:
                if np.shape(self.states[0])[0] != N:
                    raise ValueError("If an RNN is stateful, the batch size of the input "
                                     "sequences must be the same as the batch size of the "
                                     "initial state. \n- Expected batch size: "
                                     f"{np.shape(self.states[0])[0]}\n- Received batch size: {N}")
                return list(self.states)
            return self.cell.get_initial_state(N)
        states = list(initial_state) if isinstance(initial_state, (list, tuple)) else \
            [initial_state]
        if len(states) != 2:
            raise ValueError(f'Layer "{self.name}" expects 2 initial states [h, c], but it '
                             f"received {len(states)} initial state(s).")
        return states

    def _loop(self, zx, states, mask, rec_masks):
        T = zx.shape[1]
        N = zx.shape[0]
        keep = None if mask is None else _devices.host_array(mask, bool)
        if keep is not None and keep.shape != (N, T):
            raise ValueError(f'Layer "{self.name}": the mask must have shape (batch, '
                             f"timesteps) = {(N, T)}, received {keep.shape}.")
        h, c = states
        prev_out, outs = None, []
        for t in (range(T - 1, -1, -1) if self.go_backwards else range(T)):
            h1, c1 = self.cell.gates_step(ops.getitem(zx, (slice(None), t)), h, c, rec_masks)
            out = h1
            if keep is not None:
                k = keep[:, t].astype(np.float32).reshape((N,) + (1,) * (len(h1.shape) - 1))
                h1, c1 = _blend(k, h1, h), _blend(k, c1, c)
                if self.zero_output_for_mask:
                    out = ops.multiply(k, out)
                else:
                    prev = np.zeros(tuple(out.shape), np.float32) if prev_out is None \
                        else prev_out
                    out = _blend(k, out, prev)
            h, c, prev_out = h1, c1, out
            if self.return_sequences:
                outs.append(ops.expand_dims(out, 1))
        outputs = ops.concatenate(outs, axis=1) if self.return_sequences else None
        return outputs, prev_out, [h, c]

    # ---- shapes, masks, config ----
    def _symbolic(self, sequences):
        shapes = self.compute_output_shape(tuple(sequences.shape))
        if self.return_state:
            return [KerasTensor(s, sequences.dtype) for s in shapes]
        return KerasTensor(shapes, sequences.dtype)

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        sequences_shape = tuple(sequences_shape)
        batch, steps = sequences_shape[0], sequences_shape[1]
        state = self.cell.compute_output_shape((batch,) + sequences_shape[2:])[0][1:]
        output = (batch, steps) + state if self.return_sequences else (batch,) + state
        if self.return_state:
            return [output, (batch,) + state, (batch,) + state]
        return output

    def compute_mask(self, inputs, previous_mask=None):
        mask = previous_mask[0] if isinstance(previous_mask, (list, tuple)) else previous_mask
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            return [output_mask, None, None]
        return output_mask

    def get_config(self):
        cell = self.cell
        config = super().get_config()
        weight_args = serialize_weight_args(cell, ("kernel", "recurrent", "bias"),
                                            activity=False)
        config.update({
            "return_sequences": self.return_sequences,
            "return_state": self.return_state,
            "go_backwards": self.go_backwards,
            "stateful": self.stateful,
            "unroll": self.unroll,
            "zero_output_for_mask": self.zero_output_for_mask,
            "filters": cell.filters,
            "kernel_size": cell.kernel_size,
            "strides": cell.strides,
            "padding": cell.padding,
            "data_format": cell.data_format,
            "dilation_rate": cell.dilation_rate,
            "activation": activations.serialize(cell.activation),
            "recurrent_activation": activations.serialize(cell.recurrent_activation),
            "use_bias": cell.use_bias,
            "kernel_initializer": weight_args["kernel_initializer"],
            "recurrent_initializer": weight_args["recurrent_initializer"],
            "bias_initializer": weight_args["bias_initializer"],
            "unit_forget_bias": cell.unit_forget_bias,
            "kernel_regularizer": weight_args["kernel_regularizer"],
            "recurrent_regularizer": weight_args["recurrent_regularizer"],
            "bias_regularizer": weight_args["bias_regularizer"],
            "activity_regularizer": regularizers.serialize(self.activity_regularizer),
            "kernel_constraint": weight_args["kernel_constraint"],
            "recurrent_constraint": weight_args["recurrent_constraint"],
            "bias_constraint": weight_args["bias_constraint"],
            "dropout": cell.dropout,
            "recurrent_dropout": cell.recurrent_dropout,
            "seed": cell.seed,
        })
        return config


def _blend(keep, new, old):
    """keep * new + (1 - keep) * old, keep (N, 1, ...) of 0/1 floats."""
    return ops.add(ops.multiply(keep, new), ops.multiply(1.0 - keep, old))


_EXAMPLE_SHAPES = {1: "(5, 16, 3)", 2: "(5, 16, 16, 3)", 3: "(5, 8, 8, 8, 3)"}


def conv_lstm_doc(rank):
    """The docstring of ConvLSTM{rank}D (one text for the three ranks)."""
    return _DOC.format(rank=rank, ndim=rank + 3, example=_EXAMPLE_SHAPES[rank])


_DOC = """{rank}D Convolutional LSTM: an LSTM whose input and recurrent transformations are
    convolutions (Keras 3's ConvLSTM{rank}D; weights interchange with Keras).

    Args:
        filters: int, the number of output channels (of h and c).
        kernel_size: int or tuple of {rank} ints.
        strides: int or tuple of {rank} ints (input convolution; the recurrent one uses 1).
            Strides > 1 with dilation_rate > 1 is refused.
        padding: "valid" or "same" (input convolution; the recurrent one uses "same").
        data_format: "channels_last" (batch, time, ..., channels) or "channels_first"
            (batch, time, channels, ...); None: the configured default.
        dilation_rate: int or tuple of {rank} ints.
        activation: default "tanh"; recurrent_activation: default "sigmoid".
        use_bias, kernel/recurrent/bias initializers (recurrent: orthogonal),
            unit_forget_bias (forget-gate bias initialized to ones), regularizers,
            activity_regularizer, constraints: as Keras.
        dropout: input dropout in training, one mask per gate drawn once per call (shared by
            every time step).
        recurrent_dropout: dropout on h before the recurrent convolution, one mask per gate.
        seed: seed of the dropout masks.
        return_sequences: return every step's h (batch, time, ...) instead of the last.
        return_state: also return the final [h, c].
        go_backwards: process the sequence in reverse (outputs in processing order).
        stateful: carry the final states to the next call (static batch size needed).
        unroll: accepted (the step loop is always a Python loop of ops).

    Call arguments:
        inputs: a {ndim}D tensor. initial_state: [h, c]. mask: (batch, time) booleans (a
            masked step keeps the states and repeats the previous output). training: dropout.

    Example:
    ```python
    y = ConvLSTM{rank}D(8, 3, padding="same")(Input(shape={example}))
    ```
    """
