"""ConvLSTMCell: the weights and arguments of a convolutional LSTM (Keras 3's cell).

The cell holds `kernel` (*kernel_size, C, 4 * filters), `recurrent_kernel`
(*kernel_size, filters, 4 * filters) and `bias` (4 * filters,), gates in Keras's order i, f, c,
o along the last axis, so weights move to and from Keras unchanged. The ConvLSTM layers run the
sequence (`conv_lstm.py`); the cell's `call` is one step, for `RNN(cell)`-style use.
"""

import numpy as np

from fkeras import activations, config, ops, random
from fkeras.engine.input_spec import InputSpec
from fkeras.layers.rnn.cell_base import _buffer_of
from fkeras.layers.convolutional.base_conv import (
    check_strides_dilation,
    conv_output_shape,
    positive_int,
    standardize_padding,
)
from fkeras.layers.layer import Layer
from fkeras.layers.reshaping.spatial_args import standardize_tuple
from fkeras.layers.weight_args import serialize_weight_args, store_weight_args
from fkeras.ops.conv import conv2d
from fkeras.ops.conv_nd import conv3d


class _UnitForgetBias:
    """Bias blocks [i, f, c, o]: the f block ones, the others from `initializer`."""

    def __init__(self, initializer, filters):
        self.initializer, self.filters = initializer, filters

    def __call__(self, shape, dtype=None):
        F, init = self.filters, self.initializer
        return np.concatenate([np.asarray(init((F,)), np.float32), np.ones(F, np.float32),
                               np.asarray(init((2 * F,)), np.float32)])


def check_rate(value, arg):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ValueError(f"Invalid value received for argument `{arg}`. Expected a float "
                         f"value between 0 and 1. Received: {arg}={value}")
    return float(value)


class ConvLSTMCell(Layer):
    """One step of a convolutional LSTM over rank-`rank` spatial inputs (Keras 3's cell).

    i = rec(conv(x, K_i) + b_i + conv(h, R_i)), likewise f and o; c' = f c + i act(conv(x,
    K_c) + b_c + conv(h, R_c)); h' = o act(c'). The input convolution uses `strides`,
    `padding` and `dilation_rate`; the recurrent one stride 1, "same" padding.

    Args:
        rank: 1, 2 or 3. Other arguments: see ConvLSTM2D.
    """

    _fk_float_inputs = True

    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, activation="tanh", recurrent_activation="sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rank = rank
        self.filters = positive_int(filters, "filters")
        self.kernel_size = standardize_tuple(kernel_size, rank, "kernel_size")
        self.strides = standardize_tuple(strides, rank, "strides")
        self.dilation_rate = standardize_tuple(dilation_rate, rank, "dilation_rate")
        check_strides_dilation(self.strides, self.dilation_rate)
        self.padding = standardize_padding(padding)
        self.data_format = config.data_format_or_default(data_format)
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = bool(use_bias)
        self.unit_forget_bias = bool(unit_forget_bias)
        store_weight_args(self, ("kernel", "recurrent", "bias"),
                          kernel_initializer=kernel_initializer,
                          recurrent_initializer=recurrent_initializer,
                          bias_initializer=bias_initializer,
                          kernel_regularizer=kernel_regularizer,
                          recurrent_regularizer=recurrent_regularizer,
                          bias_regularizer=bias_regularizer, kernel_constraint=kernel_constraint,
                          recurrent_constraint=recurrent_constraint,
                          bias_constraint=bias_constraint)
        self.dropout = min(1.0, max(0.0, check_rate(dropout, "dropout")))
        self.recurrent_dropout = min(1.0, max(0.0, check_rate(recurrent_dropout,
                                                              "recurrent_dropout")))
        self.seed = seed
        self.seed_generator = random.SeedGenerator(seed) if seed is not None else None
        self.state_size = -1
        self.input_spec = InputSpec(ndim=rank + 2)

    @property
    def channel_axis(self):
        return 1 if self.data_format == "channels_first" else -1

    def build(self, inputs_shape, states_shape=None):
        inputs_shape = tuple(inputs_shape)
        spatial = inputs_shape[2:] if self.data_format == "channels_first" else \
            inputs_shape[1:-1]
        if None in spatial:
            raise ValueError("ConvLSTM layers only support static input shapes for the spatial "
                             f"dimension. Received invalid input shape: input_shape="
                             f"{inputs_shape}")
        channels = inputs_shape[self.channel_axis]
        if channels is None:
            raise ValueError("The channel dimension of the inputs (last axis) should be defined. "
                             f"Found None. Full input shape received: input_shape={inputs_shape}")
        self.spatial_dims, self.input_dim = tuple(spatial), channels
        self.input_spec = InputSpec(ndim=self.rank + 2, shape=(None,) + inputs_shape[1:])
        F = self.filters
        self.kernel = self.add_weight(shape=self.kernel_size + (channels, 4 * F), name="kernel",
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(
            shape=self.kernel_size + (F, 4 * F), name="recurrent_kernel",
            initializer=self.recurrent_initializer, regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint)
        self.bias = None
        if self.use_bias:
            init = _UnitForgetBias(self.bias_initializer, F) if self.unit_forget_bias \
                else self.bias_initializer
            self.bias = self.add_weight(shape=(4 * F,), name="bias", initializer=init,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        self.built = True

    # ---- the pieces the layer's loop uses ----
    def conv(self, x, kernel, bias=None, strides=None, padding=None, dilation=None):
        fn = conv3d if self.rank == 3 else conv2d
        return fn(x, kernel, bias, self.strides if strides is None else strides,
                  self.padding if padding is None else padding, self.data_format,
                  self.dilation_rate if dilation is None else dilation)

    def recurrent_conv(self, h, kernel):
        return self.conv(h, kernel, None, 1, "same", 1)

    def gate(self, z, g):
        """Gate block g (0..3) of a (..., 4F) tensor along the channel axis."""
        F = self.filters
        index = [slice(None)] * len(z.shape)
        index[self.channel_axis] = slice(g * F, (g + 1) * F)
        return ops.getitem(z, tuple(index))

    def kernel_block(self, w, g):
        F = self.filters
        return ops.getitem(w, (Ellipsis, slice(g * F, (g + 1) * F)))

    def gates_step(self, zx, h, c, rec_masks=None):
        """(h', c') from the input projection zx (N, ..., 4F) and the states."""
        if rec_masks is None:
            z = ops.add(zx, self.recurrent_conv(h, self.recurrent_kernel))
            zi, zf, zc, zo = (self.gate(z, g) for g in range(4))
        else:
            zi, zf, zc, zo = (ops.add(self.gate(zx, g), self.recurrent_conv(
                ops.multiply(h, rec_masks[g]), self.kernel_block(self.recurrent_kernel, g)))
                for g in range(4))
        rec, act = self.recurrent_activation, self.activation
        c = ops.add(ops.multiply(rec(zf), c), ops.multiply(rec(zi), act(zc)))
        h = ops.multiply(rec(zo), act(c))
        return h, c

    def project(self, x, input_masks=None):
        """The input convolution of every gate: (M, ...) -> (M, ..., 4F); with per-gate masks
        (broadcasting to x) one convolution per gate."""
        if input_masks is None:
            return self.conv(x, self.kernel, self.bias)
        blocks = [self.conv(ops.multiply(x, input_masks[g]), self.kernel_block(self.kernel, g),
                            None if self.bias is None else
                            ops.getitem(self.bias, slice(g * self.filters,
                                                         (g + 1) * self.filters)))
                  for g in range(4)]
        return ops.concatenate(blocks, axis=self.channel_axis)

    def dropout_masks(self, shape, rate):
        """Four masks of 0 and 1 / (1 - rate) of `shape`, one per gate."""
        ones = np.ones(shape, np.float32)
        return [_buffer_of(random.dropout(ones, rate, seed=self.seed_generator))
                for _ in range(4)]

    # ---- Keras's cell interface ----
    def call(self, inputs, states, training=False):
        h, c = states
        input_masks = rec_masks = None
        if training and 0.0 < self.dropout < 1.0:
            input_masks = self.dropout_masks(tuple(inputs.shape), self.dropout)
        if training and 0.0 < self.recurrent_dropout < 1.0:
            rec_masks = self.dropout_masks(tuple(h.shape), self.recurrent_dropout)
        h, c = self.gates_step(self.project(inputs, input_masks), h, c, rec_masks)
        return h, [h, c]

    def compute_output_shape(self, inputs_shape, states_shape=None):
        out = conv_output_shape(self, inputs_shape, self.filters,
                                self.kernel_size + (inputs_shape[self.channel_axis],
                                                    4 * self.filters))
        return out, [out, out]

    def get_initial_state(self, batch_size=None):
        shape = (batch_size,) + self.spatial_dims + (self.input_dim,) \
            if self.data_format == "channels_last" else \
            (batch_size, self.input_dim) + self.spatial_dims
        out = self.compute_output_shape(shape)[0]
        return [np.zeros(out, np.float32), np.zeros(out, np.float32)]

    def get_config(self):
        config = super().get_config()
        config.update(self._arg_config())
        config.update({"seed": self.seed})
        return config

    def _arg_config(self):
        return {
            "filters": self.filters,
            "kernel_size": self.kernel_size,
            "strides": self.strides,
            "padding": self.padding,
            "data_format": self.data_format,
            "dilation_rate": self.dilation_rate,
            "activation": activations.serialize(self.activation),
            "recurrent_activation": activations.serialize(self.recurrent_activation),
            "use_bias": self.use_bias,
            **{k: v for k, v in serialize_weight_args(
                self, ("kernel", "recurrent", "bias"), activity=False).items()
               if k.endswith("_initializer")},
            "unit_forget_bias": self.unit_forget_bias,
            **{k: v for k, v in serialize_weight_args(
                self, ("kernel", "recurrent", "bias"), activity=False).items()
               if not k.endswith("_initializer")},
            "dropout": self.dropout,
            "recurrent_dropout": self.recurrent_dropout,
        }
