"""What SimpleRNNCell, LSTMCell and GRUCell share: arguments, weights, dropout masks, config.

Weights have Keras's layout (kernel (F, G*U), recurrent_kernel (U, G*U), bias), so cell and
layer weights move between fkeras and Keras with get_weights / set_weights unchanged.

Dropout masks (Keras 3's DropoutRNNCell): drawn on the first step of a sequence, from
`ones_like(step input)` and `ones_like(h)`, one per gate with implementation 1, and kept for
every step until `reset_dropout_mask()` / `reset_recurrent_dropout_mask()` (RNN calls them at the
end of each call).
"""

import numpy as np

from fkeras import activations, ops, random
from fkeras.layers.layer import Layer
from fkeras.layers.weight_args import serialize_weight_args, store_weight_args


def _buffer_of(x):
    """The device buffer of an op result (a Tensor in tensor mode); it stays on its device."""
    return getattr(x, "_value", x)


class DropoutRNNCell:
    """Mixin: cached dropout masks for a cell's inputs and recurrent state."""

    dropout_mask_count = None

    def _create_dropout_mask(self, like, rate):
        ones = np.ones(np.shape(like), np.float32)
        draws = 1 if self.dropout_mask_count is None else self.dropout_mask_count
        masks = [_buffer_of(random.dropout(ones, rate, seed=self.seed_generator))
                 for _ in range(draws)]
        return masks[0] if self.dropout_mask_count is None else masks

    def get_dropout_mask(self, step_input):
        if getattr(self, "_dropout_mask", None) is None and self.dropout > 0:
            self._dropout_mask = self._create_dropout_mask(step_input, self.dropout)
        return getattr(self, "_dropout_mask", None)

    def get_recurrent_dropout_mask(self, state):
        if getattr(self, "_recurrent_dropout_mask", None) is None and \
                self.recurrent_dropout > 0:
            self._recurrent_dropout_mask = self._create_dropout_mask(
                state, self.recurrent_dropout)
        return getattr(self, "_recurrent_dropout_mask", None)

    def reset_dropout_mask(self):
        self._dropout_mask = None

    def reset_recurrent_dropout_mask(self):
        self._recurrent_dropout_mask = None


class RecurrentCell(DropoutRNNCell, Layer):
    """A built-in cell with G gate blocks of `units` each."""

    _fk_float_inputs = True
    gates = 1

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None,
                 implementation=2, **kwargs):
        if isinstance(units, bool) or not isinstance(units, int) or units <= 0:
            raise ValueError("Received an invalid value for argument `units`, expected a "
                             f"positive integer, got {units}.")
        super().__init__(**kwargs)
        self.units = units
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        store_weight_args(self, ("kernel", "recurrent", "bias"),
                          kernel_initializer=kernel_initializer,
                          recurrent_initializer=recurrent_initializer,
                          bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                          recurrent_regularizer=recurrent_regularizer,
                          bias_regularizer=bias_regularizer, kernel_constraint=kernel_constraint,
                          recurrent_constraint=recurrent_constraint,
                          bias_constraint=bias_constraint)
        self.dropout = min(1.0, max(0.0, float(dropout)))
        self.recurrent_dropout = min(1.0, max(0.0, float(recurrent_dropout)))
        self.seed = seed
        self.seed_generator = random.SeedGenerator(seed)
        self.implementation = 1 if self.recurrent_dropout != 0.0 else implementation
        if self.implementation == 1 and self.gates > 1:
            self.dropout_mask_count = self.gates
        self.state_size = units
        self.output_size = units

    def build(self, input_shape):
        features = input_shape[-1]
        G, U = self.gates, self.units
        self.kernel = self.add_weight(shape=(features, G * U), name="kernel",
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(shape=(U, G * U), name="recurrent_kernel",
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer,
                                                constraint=self.recurrent_constraint)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(shape=self._bias_shape(), name="bias",
                                        initializer=self._bias_initializer(),
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        self.built = True

    def _bias_shape(self):
        return (self.gates * self.units,)

    def _bias_initializer(self):
        return self.bias_initializer

    def _input_projection(self, inputs, bias, training):
        """inputs @ kernel + bias (N, G*U), with this sequence's input dropout mask(s)."""
        masks = self.get_dropout_mask(inputs) if training and 0 < self.dropout < 1 else None
        if masks is None:
            z = ops.matmul(inputs, self.kernel)
            return z if bias is None else ops.add(z, bias)
        if not isinstance(masks, list):
            z = ops.matmul(ops.multiply(inputs, masks), self.kernel)
            return z if bias is None else ops.add(z, bias)
        U, blocks = self.units, []
        for g, m in enumerate(masks):
            zg = ops.matmul(ops.multiply(inputs, m), _cols(self.kernel, g, U))
            blocks.append(zg if bias is None else ops.add(zg, _cols(bias, g, U)))
        return ops.concatenate(blocks, axis=-1)

    def _recurrent_masks(self, h, training):
        """The per-gate recurrent dropout masks (a list of G), or None."""
        if not (training and 0 < self.recurrent_dropout < 1):
            return None
        masks = self.get_recurrent_dropout_mask(h)
        return masks if isinstance(masks, list) else [masks] * self.gates

    def _recurrent_blocks(self):
        if self.gates == 1:
            return [self.recurrent_kernel]
        return [_cols(self.recurrent_kernel, g, self.units) for g in range(self.gates)]

    def get_initial_state(self, batch_size=None):
        sizes = self.state_size if isinstance(self.state_size, list) else [self.state_size]
        return [np.zeros((batch_size, d), np.float32) for d in sizes]

    def get_config(self):
        config = super().get_config()
        config.update({"units": self.units,
                       "activation": activations.serialize(self.activation),
                       "use_bias": self.use_bias})
        config.update(self._extra_config())
        config.update(serialize_weight_args(self, ("kernel", "recurrent", "bias"),
                                            activity=False))
        config.update({"dropout": self.dropout, "recurrent_dropout": self.recurrent_dropout,
                       "seed": self.seed})
        return config

    def _extra_config(self):
        return {}


def _cols(w, g, U):
    """Columns [g*U, (g+1)*U) of a (rows, G*U) weight, or of a (G*U,) bias."""
    if len(w.shape) == 1:
        return ops.getitem(w, slice(g * U, (g + 1) * U))
    return ops.getitem(w, (slice(None), slice(g * U, (g + 1) * U)))
