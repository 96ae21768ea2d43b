"""The shared body of LSTM, GRU and SimpleRNN: arguments, weights, outputs, config.

Each layer runs its whole sequence as one op call (ops.lstm / ops.gru / ops.simple_rnn) over
Keras-layout weights (kernel (F, G*U), recurrent_kernel (U, G*U), bias), so weights move to and
from Keras with get_weights / set_weights unchanged.
"""

from fkeras import activations, constraints, initializers, random, regularizers
from fkeras.engine.input_spec import InputSpec
from fkeras.layers.layer import Layer
from fkeras.layers.weight_args import serialize_weight_args
from fkeras.ops.rnn import recurrent_code


class RecurrentBase(Layer):
    """A recurrent layer over (batch, timesteps, features) inputs.

    Subclasses set `gates` (G), `n_states`, and implement `_run(x, states, training)` returning
    (hs, final_states) with the op, and `_bias_shape()` / `_bias_initializer()`.
    """

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
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
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
        self.implementation = implementation
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
            raise ValueError(f'Layer "{self.name}": stateful=True is not supported yet.')
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
        if mask is not None:
            raise ValueError(f'Layer "{self.name}": masking is not supported yet.')
        if training and self.recurrent_dropout > 0:
            raise ValueError(f'Layer "{self.name}": recurrent_dropout > 0 is not supported yet '
                             f"(received recurrent_dropout={self.recurrent_dropout}).")
        states = self._initial_states(initial_state)
        x = sequences
        if training and self.dropout > 0:
            # One mask per sample, shared by every time step (Keras's variational dropout).
            x = random.dropout(x, self.dropout, noise_shape=(None, 1, None),
                               seed=self.seed_generator)
        hs, finals = self._run(x, states)
        output = hs if self.return_sequences else finals[0]
        return [output] + list(finals) if self.return_state else output

    def _initial_states(self, initial_state):
        if initial_state is None:
            return [None] * self.n_states
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
