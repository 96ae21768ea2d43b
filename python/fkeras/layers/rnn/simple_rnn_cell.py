"""SimpleRNNCell: h' = activation(x @ kernel + bias + h @ recurrent_kernel)."""

from fkeras import ops
from fkeras.layers.rnn.cell_base import RecurrentCell


class SimpleRNNCell(RecurrentCell):
    """The cell of a fully-connected RNN, one time step (Keras 3).

    Args:
        units: positive int, the size of the state and of the output.
        activation: default "tanh". use_bias, initializers (recurrent: orthogonal),
            regularizers, constraints: as SimpleRNN.
        dropout: input dropout (a mask per sequence, drawn on its first step, training only).
        recurrent_dropout: dropout on the previous state before the recurrent product.
        seed: the dropout seed.

    Call arguments:
        sequence: (batch, features), one step. states: [h] (or h). training: enables dropout.

    Returns:
        (output, new_states): output (batch, units); new_states [output] ([...] when states
        was a list, else the array).

    Example:
    ```python
    y = RNN(SimpleRNNCell(4))(Input(shape=(10, 8)))   # (None, 4)
    ```
    """

    gates = 1

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None,
                 **kwargs):
        super().__init__(units, activation, use_bias, kernel_initializer,
                         recurrent_initializer, bias_initializer, kernel_regularizer,
                         recurrent_regularizer, bias_regularizer, kernel_constraint,
                         recurrent_constraint, bias_constraint, dropout, recurrent_dropout,
                         seed, **kwargs)

    def call(self, sequence, states, training=False):
        nested = isinstance(states, (list, tuple))
        h = states[0] if nested else states
        z = self._input_projection(sequence, self.bias, training)
        masks = self._recurrent_masks(h, training)
        if masks is not None:
            h = ops.multiply(h, masks[0])
        out = self.activation(ops.add(z, ops.matmul(h, self.recurrent_kernel)))
        return out, ([out] if nested else out)
