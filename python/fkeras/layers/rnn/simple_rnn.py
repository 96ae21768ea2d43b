"""SimpleRNN: h_t = act(x_t @ kernel + h_{t-1} @ recurrent_kernel + bias), one op call."""

from fkeras import ops
from fkeras.layers.rnn.base_rnn import RecurrentBase, base_args


class SimpleRNN(RecurrentBase):
    """Fully-connected RNN whose output is fed back as the next input.

    Args:
        units: positive int; activation ("tanh"); other arguments as LSTM.

    Example:
    ```python
    y = SimpleRNN(8)(Input(shape=(5, 3)))   # y.shape == (None, 8)
    ```
    """

    gates = 1
    n_states = 1

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, unroll=False, seed=None, **kwargs):
        super().__init__(**base_args(locals()), **kwargs)

    def _run(self, x, states):
        hs, h = ops.simple_rnn(x, states[0], self.kernel, self.recurrent_kernel, self.bias,
                               go_backwards=self.go_backwards, activation=self._activation_code)
        return hs, [h]
