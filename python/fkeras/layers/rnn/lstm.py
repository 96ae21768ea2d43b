"""LSTM: long short-term memory over a whole sequence in one op call (gates i, f, c, o)."""

import numpy as np

from fkeras import activations, initializers, ops
from fkeras.layers.rnn.base_rnn import RecurrentBase, base_args
from fkeras.ops.rnn import recurrent_code


class _UnitForgetBias:
    """Keras's unit_forget_bias initializer: the f block [U:2U] is ones, the rest as given."""

    def __init__(self, initializer, units):
        self.initializer, self.units = initializer, units

    def __call__(self, shape, dtype=None):
        U, init = self.units, self.initializer
        return np.concatenate([np.asarray(init((U,)), np.float32), np.ones(U, np.float32),
                               np.asarray(init((2 * U,)), np.float32)])


class LSTM(RecurrentBase):
    """Long Short-Term Memory layer (Hochreiter & Schmidhuber, 1997), Keras 3 semantics.

    z = x @ kernel + h @ recurrent_kernel + bias, split into i, f, c, o blocks;
    c' = f * c + i * act(z_c), h' = o * act(c'), with i, f, o = recurrent_activation(z).

    Args:
        units: positive int, the size of h and c.
        activation: "tanh" (default); recurrent_activation: "sigmoid" (default). Supported:
            linear, relu, sigmoid, tanh, hard_sigmoid (Keras 3's relu6(x + 3) / 6).
        unit_forget_bias: initialize the forget-gate bias to ones (default True).
        return_sequences: return the whole (N, T, U) sequence instead of the last output.
        return_state: also return the final states: [output, h, c].
        go_backwards: process the sequence in reverse (the sequence is returned reversed).
        dropout: input dropout in training (masks drawn once per call, shared by every step;
            one per gate with implementation=1).
        recurrent_dropout: dropout on h before the recurrent matmul in training (one mask per
            gate, drawn once per call; forces implementation=1 as Keras).
        stateful: keep the final states of a call as the next call's initial states (needs
            a static batch size); `reset_states()` zeroes them.
        zero_output_for_mask: masked steps output zeros instead of the previous output.
        use_bias, initializers (recurrent: orthogonal), regularizers, constraints, seed,
            unroll (accepted; same computation): as Keras.

    Call arguments:
        initial_state: [h, c]. mask: (batch, timesteps) booleans; a masked step carries the
            states over and repeats the previous output. training: enables dropout.

    Example:
    ```python
    out, h, c = LSTM(32, return_state=True)(Input(shape=(10, 8)))   # each (None, 32)
    ```
    """

    gates = 4
    n_states = 2

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", unit_forget_bias=True, kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 dropout=0.0, recurrent_dropout=0.0, seed=None, return_sequences=False,
                 return_state=False, go_backwards=False, stateful=False, unroll=False,
                 use_cudnn="auto", **kwargs):
        super().__init__(**base_args(locals(), "recurrent_activation", "unit_forget_bias"),
                         **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self._recurrent_code = recurrent_code(activations.serialize(self.recurrent_activation),
                                              "recurrent_activation")
        self.unit_forget_bias = bool(unit_forget_bias)

    def _bias_initializer(self):
        if self.unit_forget_bias:
            return _UnitForgetBias(self.bias_initializer, self.units)
        return self.bias_initializer

    def _run(self, x, states):
        hs, h, c = ops.lstm(x, states[0], states[1], self.kernel, self.recurrent_kernel,
                            self.bias, go_backwards=self.go_backwards,
                            activation=self._activation_code,
                            recurrent_activation=self._recurrent_code)
        return hs, [h, c]

    def get_config(self):
        config = super().get_config()
        config.update({
            "recurrent_activation": activations.serialize(self.recurrent_activation),
            "unit_forget_bias": self.unit_forget_bias,
            "bias_initializer": initializers.serialize(self.bias_initializer),
        })
        return config
