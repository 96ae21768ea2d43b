"""The shared body of LSTM, GRU and SimpleRNN: arguments, weights, outputs, config.

Each layer runs its whole sequence as one op call (ops.lstm / ops.gru / ops.simple_rnn) over
Keras-layout weights (kernel (F, G*U), recurrent_kernel (U, G*U), bias), so weights move to and
from Keras with get_weights / set_weights unchanged.
"""

import numpy as np

from fkeras import activations, random
from fkeras.backend import devices as _devices
from fkeras.engine.input_spec import InputSpec
from fkeras.layers.rnn.cell_base import _buffer_of
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.rnn import rnn_steps as rec_steps
from fkeras.layers.layer import Layer
from fkeras.layers.weight_args import serialize_weight_args, store_weight_args
from fkeras.ops.rnn import recurrent_code


def base_args(local_vars, *own):
    """The RecurrentBase constructor arguments among a subclass's `locals()` (the subclass
    spells out Keras's full signature, so positional calls bind as in Keras)."""
    skip = {"self", "kwargs", "__class__", *own}
    return {k: v for k, v in local_vars.items() if k not in skip}


class RecurrentBase(Layer):
    """A recurrent layer over (batch, timesteps, features) inputs.

    Subclasses set `gates` (G), `n_states`, and implement `_run(x, states, training)` returning
    (hs, final_states) with the op, and `_bias_shape()` / `_bias_initializer()`.
    """

    _fk_float_inputs = True

    gates = 1
    n_states = 1

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, seed=None, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, unroll=False, use_cudnn="auto",
                 zero_output_for_mask=False, implementation=2, time_major=False, **kwargs):
        super().__init__(**kwargs)
        if isinstance(units, bool) or not isinstance(units, int) or units <= 0:
            raise ValueError("Received an invalid value for argument `units`, expected a "
                             f"positive integer, got {units}.")
        self.units = units
        self.activation = activations.get(activation)
        self._activation_code = recurrent_code(activations.serialize(self.activation))
        self.use_bias = bool(use_bias)
        store_weight_args(self, ("kernel", "recurrent", "bias"),
                          kernel_initializer=kernel_initializer,
                          recurrent_initializer=recurrent_initializer,
                          bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                          recurrent_regularizer=recurrent_regularizer,
                          bias_regularizer=bias_regularizer,
                          activity_regularizer=activity_regularizer,
                          kernel_constraint=kernel_constraint,
                          recurrent_constraint=recurrent_constraint,
                          bias_constraint=bias_constraint)
        for arg, value in (("dropout", dropout), ("recurrent_dropout", recurrent_dropout)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                    not 0.0 <= value < 1.0:
                raise ValueError(f"Invalid value received for argument `{arg}`. Expected a "
                                 f"float value in [0, 1). Received: {arg}={value}")
        self.dropout, self.recurrent_dropout = float(dropout), float(recurrent_dropout)
        self.seed = seed
        self.seed_generator = random.SeedGenerator(seed) if seed is not None else None
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards, self.stateful = bool(go_backwards), bool(stateful)
        self.unroll, self.use_cudnn = bool(unroll), use_cudnn
        self.zero_output_for_mask = bool(zero_output_for_mask)
        if use_cudnn not in ("auto", True, False):
            raise ValueError("Invalid valid received for argument `use_cudnn`. Expected one of "
                             f"{{'auto', True, False}}. Received: use_cudnn={use_cudnn}")
        if implementation not in (1, 2):
            raise ValueError(f'Layer "{self.name}": `implementation` must be 1 or 2, received '
                             f"{implementation}.")
        if self.recurrent_dropout > 0:
            implementation = 1  # Keras: per-gate masks whenever recurrent dropout is used
        self.implementation = implementation
        self.states = None
        self.supports_masking = True
        if time_major:
            raise ValueError(f'Layer "{self.name}": time_major=True is not supported; pass '
                             "(batch, timesteps, features) inputs.")
        self.input_spec = InputSpec(ndim=3)

    # ---- weights ----
    def build(self, input_shape):
        features = input_shape[-1]
        if features is None:
            raise ValueError(f'The last dimension of the inputs to layer "{self.name}" should '
                             f"be defined. Found None. Full input shape received: "
                             f"{tuple(input_shape)}")
        if self.stateful:
            if input_shape[0] is None:
                raise ValueError("When using `stateful=True` in a RNN, the batch size must be "
                                 "static. Found dynamic batch size: sequence.shape="
                                 f"{tuple(input_shape)}")
            self.states = [np.zeros((input_shape[0], self.units), np.float32)
                           for _ in range(self.n_states)]
        G, U = self.gates, self.units
        self.kernel = self.add_weight(shape=(features, G * U), name="kernel",
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(shape=(U, G * U), name="recurrent_kernel",
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer,
                                                constraint=self.recurrent_constraint)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(shape=self._bias_shape(), name="bias",
                                        initializer=self._bias_initializer(),
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        self.input_spec = InputSpec(ndim=3, axes={-1: features})
        self.built = True

    def _bias_shape(self):
        return (self.gates * self.units,)

    def _bias_initializer(self):
        return self.bias_initializer

    # ---- calling ----
    def call(self, sequences, initial_state=None, mask=None, training=None):
        if self.unroll and sequences.shape[1] is None:
            raise ValueError(_UNROLL_ERROR)
        states = self._initial_states(initial_state, sequences)
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        symbolic = isinstance(sequences, KerasTensor)
        dropout = bool(training) and self.dropout > 0
        rec_dropout = bool(training) and self.recurrent_dropout > 0
        per_gate = rec_dropout or (dropout and self.implementation == 1 and self.gates > 1)
        if symbolic or (mask is None and not rec_dropout and not per_gate):
            x = sequences
            if dropout and not symbolic:
                # One mask per sample, shared by every time step (Keras's variational dropout).
                x = random.dropout(x, self.dropout, noise_shape=(None, 1, None),
                                   seed=self.seed_generator)
            hs, finals = self._run(x, states)
            last = finals[0]
        else:
            hs, last, finals = self._run_steps(sequences, states, mask, dropout, rec_dropout)
        if self.stateful and not symbolic:
            self.states = [np.array(_devices.host_array(s), np.float32) for s in finals]
        output = hs if self.return_sequences else last
        return [output] + list(finals) if self.return_state else output

    def _run_steps(self, x, states, mask, dropout, rec_dropout):
        N, T, F = x.shape
        states = [np.zeros((N, self.units), np.float32) if s is None else s for s in states]
        count = 1 if self.gates == 1 else self.gates
        input_masks = rec_masks = None
        if dropout:
            input_masks = self._dropout_masks((N, 1, F), self.dropout, count)
        if rec_dropout:
            rec_masks = self._dropout_masks((N, self.units), self.recurrent_dropout, count)
        if mask is not None and np.shape(mask) != (N, T):
            raise ValueError(f'Layer "{self.name}": the mask must have shape (batch, timesteps) '
                             f"= {(N, T)}, received {np.shape(mask)}.")
        return rec_steps.run_steps(self, x, states, mask, input_masks, rec_masks)

    def _dropout_masks(self, shape, rate, count):
        """`count` masks of 0 and 1 / (1 - rate), drawn once for the whole sequence."""
        ones = np.ones(shape, np.float32)
        return [_buffer_of(random.dropout(ones, rate, seed=self.seed_generator))
                for _ in range(count)]

    def compute_mask(self, inputs, previous_mask=None):
        mask = previous_mask[0] if isinstance(previous_mask, (list, tuple)) else previous_mask
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            return [output_mask] + [None] * self.n_states
        return output_mask

    # ---- stateful ----
    def reset_states(self, states=None):
        """Resets the states of a stateful layer to zeros, or to the given arrays."""
        if not self.stateful:
            raise AttributeError("Layer must be stateful.")
        if self.states is None:
            return
        if states is None:
            self.states = [np.zeros_like(s) for s in self.states]
            return
        states = list(states) if isinstance(states, (list, tuple)) else [states]
        if len(states) != self.n_states:
            raise ValueError(f'Layer "{self.name}" expects {self.n_states} state(s), but it '
                             f"received {len(states)} state value(s).")
        for i, (old, new) in enumerate(zip(self.states, states)):
            if np.shape(new) != old.shape:
                raise ValueError(f"State {i} is incompatible with layer {self.name}: expected "
                                 f"shape={old.shape}, found shape={np.shape(new)}")
        self.states = [np.array(v, np.float32) for v in states]

    def reset_state(self):
        """Keras 3 name of `reset_states()`."""
        self.reset_states()

    def _initial_states(self, initial_state, sequences):
        if initial_state is None:
            if not self.stateful:
                return [None] * self.n_states
            batch, expected = sequences.shape[0], self.states[0].shape[0]
            if batch is not None and batch != expected:
                raise ValueError("If an RNN is stateful, the batch size of the input sequences "
                                 "must be the same as the batch size of the initial state. \n"
                                 f"- Expected batch size: {expected}\n"
                                 f"- Received batch size: {batch}")
            return list(self.states)
        states = list(initial_state) if isinstance(initial_state, (list, tuple)) else \
            [initial_state]
        if len(states) != self.n_states:
            raise ValueError(f'Layer "{self.name}" expects {self.n_states} initial state(s), '
                             f"but it received {len(states)} initial state(s).")
        return states

    def compute_output_shape(self, input_shape):
        n, t = tuple(input_shape)[:2]
        output = (n, t, self.units) if self.return_sequences else (n, self.units)
        if self.return_state:
            return [output] + [(n, self.units)] * self.n_states
        return output

    # ---- config ----
    def get_config(self):
        config = super().get_config()
        config.update({
            "units": self.units,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            **serialize_weight_args(self, ("kernel", "recurrent", "bias")),
            "dropout": self.dropout,
            "recurrent_dropout": self.recurrent_dropout,
            "seed": self.seed,
            "return_sequences": self.return_sequences,
            "return_state": self.return_state,
            "go_backwards": self.go_backwards,
            "stateful": self.stateful,
            "unroll": self.unroll,
            "use_cudnn": self.use_cudnn,
            "zero_output_for_mask": self.zero_output_for_mask,
            "implementation": self.implementation,
        })
        return config


_UNROLL_ERROR = ("Cannot unroll a RNN if the time dimension is undefined. \n"
                 "- If using a Sequential model, specify the time dimension by passing an "
                 "`Input()` as your first layer.\n"
                 "- If using the functional API, specify the time dimension by passing a "
                 "`shape` or `batch_shape` argument to your `Input()`.")
