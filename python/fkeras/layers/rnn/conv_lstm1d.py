"""ConvLSTM1D: a convolutional LSTM over 1-D inputs (Keras 3)."""

from fkeras.layers.rnn.conv_lstm import ConvLSTM, layer_args


class ConvLSTM1D(ConvLSTM):
    """1D Convolutional LSTM: an LSTM whose input and recurrent transformations are
    convolutions (Keras 3's ConvLSTM1D; weights interchange with Keras).

    Args:
        filters: int, the number of output channels (of h and c).
        kernel_size: int or tuple of 1 ints.
        strides: int or tuple of 1 ints (input convolution; the recurrent one uses 1).
            Strides > 1 with dilation_rate > 1 is refused.
        padding: "valid" or "same" (input convolution; the recurrent one uses "same").
        data_format: "channels_last" (batch, time, ..., channels) or "channels_first"
            (batch, time, channels, ...); None: the configured default.
        dilation_rate: int or tuple of 1 ints.
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
        inputs: a 4D tensor. initial_state: [h, c]. mask: (batch, time) booleans (a
            masked step keeps the states and repeats the previous output). training: dropout.

    Example:
    ```python
    y = ConvLSTM1D(8, 3, padding="same")(Input(shape=(5, 16, 3)))
    ```
    """

    rank = 1

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, activation="tanh", recurrent_activation="sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, seed=None, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, **kwargs):
        super().__init__(**layer_args(locals()), **kwargs)
