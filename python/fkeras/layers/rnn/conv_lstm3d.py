"""ConvLSTM3D: a convolutional LSTM over 3-D inputs (Keras 3)."""

from fkeras.layers.rnn.conv_lstm import ConvLSTM, conv_lstm_doc, layer_args


class ConvLSTM3D(ConvLSTM):
    __doc__ = conv_lstm_doc(3)

    rank = 3

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
