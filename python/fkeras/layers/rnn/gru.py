"""GRU: gated recurrent unit over a whole sequence in one op call (gates z, r, h)."""

from fkeras import activations, ops
from fkeras.layers.rnn.base_rnn import RecurrentBase, base_args
from fkeras.ops.rnn import recurrent_code


class GRU(RecurrentBase):
    """Gated Recurrent Unit (Cho et al., 2014), Keras 3 semantics.

    z, r = recurrent_activation(x W_z,r + h R_z,r + b); the candidate is
    act(x W_h + r * (h R_h + b_rh)) with reset_after (the default, cuDNN-compatible; bias
    shape (2, 3U): input bias row, recurrent bias row) or act(x W_h + (r * h) R_h + b_h)
    without (bias (3U,)); h' = z * h + (1 - z) * candidate.

    Args:
        units: positive int.
        activation ("tanh"), recurrent_activation ("sigmoid"), reset_after (True).
        Other arguments as LSTM.

    Example:
    ```python
    seq = GRU(16, return_sequences=True)(Input(shape=(None, 4)))   # (None, None, 16)
    ```
    """

    gates = 3
    n_states = 1

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, seed=None, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, unroll=False, reset_after=True,
                 use_cudnn="auto", **kwargs):
        super().__init__(**base_args(locals(), "recurrent_activation", "reset_after"),
                         **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self._recurrent_code = recurrent_code(activations.serialize(self.recurrent_activation),
                                              "recurrent_activation")
        self.reset_after = bool(reset_after)

    def _bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def _run(self, x, states):
        hs, h = ops.gru(x, states[0], self.kernel, self.recurrent_kernel, self.bias,
                        go_backwards=self.go_backwards, reset_after=self.reset_after,
                        activation=self._activation_code,
                        recurrent_activation=self._recurrent_code)
        return hs, [h]

    def get_config(self):
        config = super().get_config()
        config.update({
            "recurrent_activation": activations.serialize(self.recurrent_activation),
            "reset_after": self.reset_after,
        })
        return config
