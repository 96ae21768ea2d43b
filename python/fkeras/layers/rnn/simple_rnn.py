"""SimpleRNN: h_t = act(x_t @ kernel + h_{t-1} @ recurrent_kernel + bias), one op call."""

from fkeras import ops
from fkeras.layers.rnn.base_rnn import RecurrentBase


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

    def _run(self, x, states):
        hs, h = ops.simple_rnn(x, states[0], self.kernel, self.recurrent_kernel, self.bias,
                               go_backwards=self.go_backwards, activation=self._activation_code)
        return hs, [h]
