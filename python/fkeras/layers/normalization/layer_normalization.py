"""LayerNormalization: normalizes each sample over the given axes, then gamma and beta."""

import warnings

from fkeras import ops
from fkeras.engine.input_spec import InputSpec
from fkeras.layers.layer import Layer
from fkeras.layers.normalization.group_normalization import check_axes, parse_axis
from fkeras.layers.weight_args import add_arg_weight, serialize_weight_args, store_weight_args


class LayerNormalization(Layer):
    """Layer normalization (Keras 3): y = (x - mean) / sqrt(var + epsilon) * gamma + beta, the
    mean and biased variance taken over `axis` for each sample.

    Args:
        axis: int or list of ints, the normalized axes (gamma and beta have their shape).
        epsilon: added to the variance (1e-3).
        center, scale: whether beta / gamma exist.
        rms_scaling: Keras 3's deprecated flag (warns as Keras does): y = x / sqrt(var +
            epsilon) * gamma, without centring and without beta (gamma exists even with
            scale=False).
        beta_initializer, gamma_initializer, beta_regularizer, gamma_regularizer,
        beta_constraint, gamma_constraint: as Keras.

    Example:
    ```python
    y = LayerNormalization()(Input(shape=(10, 16)))   # gamma, beta: (16,)
    ```
    """

    _fk_float_inputs = True

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                 rms_scaling=False, **kwargs):
        if rms_scaling:
            warnings.warn("You passed `rms_scaling=True`, which is deprecated. This argument "
                          "incorrectly scales the input by the variance, not the root mean "
                          "square.", stacklevel=2)
        super().__init__(**kwargs)
        self.axis = parse_axis(axis)
        self.epsilon = float(epsilon)
        self.center, self.scale, self.rms_scaling = bool(center), bool(scale), bool(rms_scaling)
        store_weight_args(self, ("beta", "gamma"), beta_initializer=beta_initializer,
                          gamma_initializer=gamma_initializer, beta_regularizer=beta_regularizer,
                          gamma_regularizer=gamma_regularizer, beta_constraint=beta_constraint,
                          gamma_constraint=gamma_constraint)
        self.supports_masking = True

    def build(self, input_shape):
        shape = tuple(input_shape)
        self._axes = check_axes(self.axis, len(shape))
        if any(shape[a] is None for a in self._axes):
            raise ValueError(f'Layer "{self.name}": the normalized axes must be defined. '
                             f"Received input shape {shape} and axis={self.axis}")
        param_shape = tuple(shape[a] for a in self._axes)
        self.gamma = self.beta = None
        if self.scale or self.rms_scaling:
            self.gamma = add_arg_weight(self, "gamma", param_shape)
        if self.center and not self.rms_scaling:
            self.beta = add_arg_weight(self, "beta", param_shape)
        # Later inputs must have this rank (the axes are stored as positive indices) and match
        # the weights along the normalized axes.
        self.input_spec = InputSpec(ndim=len(shape), axes={a: shape[a] for a in self._axes})
        self.built = True

    def call(self, inputs):
        from fkeras.ops.normalization import layer_norm

        return layer_norm(inputs, self.gamma, self.beta, axis=self._axes,
                          epsilon=self.epsilon, rms_scaling=self.rms_scaling)

    def compute_output_shape(self, input_shape):
        check_axes(self.axis, len(input_shape))
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update({
            "axis": self.axis,
            "epsilon": self.epsilon,
            "center": self.center,
            "scale": self.scale,
            "rms_scaling": self.rms_scaling,
            **serialize_weight_args(self, ("beta", "gamma"), activity=False),
        })
        return config
