"""LSTMCell: one step of a long short-term memory (gates i, f, c, o)."""

from fkeras import activations, initializers, ops
from fkeras.layers.rnn import rnn_steps
from fkeras.layers.rnn.cell_base import RecurrentCell
from fkeras.layers.rnn.lstm import _UnitForgetBias


class LSTMCell(RecurrentCell):
    """The cell of an LSTM, one time step (Keras 3).

    z = x @ kernel + h @ recurrent_kernel + bias in blocks i, f, c, o;
    c' = f * c + i * activation(z_c), h' = o * activation(c').

    Args:
        units: positive int. activation ("tanh"), recurrent_activation ("sigmoid"),
            use_bias, unit_forget_bias (forget-gate bias initialized to ones), initializers,
            regularizers, constraints: as LSTM.
        dropout, recurrent_dropout: training-only masks drawn once per sequence; recurrent
            dropout uses Keras's implementation 1 (one mask per gate).
        seed: the dropout seed.

    Call arguments:
        inputs: (batch, features). states: [h, c]. training: enables dropout.

    Returns:
        (h', [h', c']).

    Example:
    ```python
    y = RNN(LSTMCell(4))(Input(shape=(10, 8)))   # (None, 4)
    ```
    """

    gates = 4

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", unit_forget_bias=True, kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, seed=None, **kwargs):
        super().__init__(units, activation, use_bias, kernel_initializer,
                         recurrent_initializer, bias_initializer, kernel_regularizer,
                         recurrent_regularizer, bias_regularizer, kernel_constraint,
                         recurrent_constraint, bias_constraint, dropout, recurrent_dropout,
                         seed, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.unit_forget_bias = bool(unit_forget_bias)
        self.state_size = [units, units]

    def _bias_initializer(self):
        if self.unit_forget_bias:
            return _UnitForgetBias(self.bias_initializer, self.units)
        return self.bias_initializer

    def call(self, inputs, states, training=False):
        h, c = states[0], states[1]
        zx = self._input_projection(inputs, self.bias, training)
        masks = self._recurrent_masks(h, training)
        if masks is None:  # one recurrent product for the four gates
            z = ops.add(zx, ops.matmul(h, self.recurrent_kernel))
            U, rec, act = self.units, self.recurrent_activation, self.activation
            zs = [rnn_steps._cols(z, g, U) for g in range(4)]
            i, f, o = rec(zs[0]), rec(zs[1]), rec(zs[3])
            c = ops.add(ops.multiply(f, c), ops.multiply(i, act(zs[2])))
            h = ops.multiply(o, act(c))
            return h, [h, c]
        return rnn_steps.lstm_step(self, zx, [h, c], self._recurrent_blocks(), masks)

    def _extra_config(self):
        return {"recurrent_activation": activations.serialize(self.recurrent_activation),
                "unit_forget_bias": self.unit_forget_bias}

    def get_config(self):
        config = super().get_config()
        config["bias_initializer"] = initializers.serialize(self.bias_initializer)
        return config
