"""GRUCell: one step of a gated recurrent unit (gates z, r, h)."""

from fkeras import activations, ops
from fkeras.layers.rnn import rnn_steps
from fkeras.layers.rnn.cell_base import RecurrentCell


class GRUCell(RecurrentCell):
    """The cell of a GRU, one time step (Keras 3).

    z = rec(x W_z + h U_z), r = rec(x W_r + h U_r); with reset_after (default, bias (2, 3U):
    input row and recurrent row) h~ = act(x W_h + r * (h U_h + b_rh)), else
    h~ = act(x W_h + (r * h) U_h) (bias (3U,)); h' = z * h + (1 - z) * h~.

    Args:
        units: positive int. activation ("tanh"), recurrent_activation ("sigmoid"),
            use_bias, initializers, regularizers, constraints, reset_after: as GRU.
        dropout, recurrent_dropout: training-only masks drawn once per sequence (one per gate
            with recurrent dropout, Keras's implementation 1). seed: the dropout seed.

    Call arguments:
        inputs: (batch, features). states: [h] (or h). training: enables dropout.

    Returns:
        (h', [h']) (h' alone when states was not a list).

    Example:
    ```python
    y = RNN(GRUCell(4))(Input(shape=(10, 8)))   # (None, 4)
    ```
    """

    gates = 3

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, reset_after=True,
                 seed=None, **kwargs):
        super().__init__(units, activation, use_bias, kernel_initializer,
                         recurrent_initializer, bias_initializer, kernel_regularizer,
                         recurrent_regularizer, bias_regularizer, kernel_constraint,
                         recurrent_constraint, bias_constraint, dropout, recurrent_dropout,
                         seed, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.reset_after = bool(reset_after)

    def _bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def call(self, inputs, states, training=False):
        nested = isinstance(states, (list, tuple))
        h = states[0] if nested else states
        bias, rec_bias = self.bias, None
        if bias is not None and self.reset_after:
            bias, rb = ops.getitem(bias, 0), ops.getitem(bias, 1)
            rec_bias = [rnn_steps._cols(rb, g, self.units) for g in range(3)]
        zx = self._input_projection(inputs, bias, training)
        masks = self._recurrent_masks(h, training)
        out, _ = rnn_steps.gru_step(self, zx, [h], self._recurrent_blocks(), masks, rec_bias)
        return out, ([out] if nested else out)

    def _extra_config(self):
        return {"recurrent_activation": activations.serialize(self.recurrent_activation)}

    def get_config(self):
        config = super().get_config()
        config["reset_after"] = self.reset_after
        return config
