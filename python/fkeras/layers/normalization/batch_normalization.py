"""BatchNormalization: normalizes over every axis but the kept (feature) axis or axes."""

from fkeras import constraints, initializers, ops, regularizers
from fkeras.engine.input_spec import InputSpec
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.layer import Layer
from fkeras.ops.normalization import kept_axes

_CLIPPING_KEYS = ["rmax", "rmin", "dmax"]


class BatchNormalization(Layer):
    """Batch normalization (Keras 3 numerics, Keras 2 arguments).

    `axis` is the feature axis that is KEPT (statistics are reduced over all other axes): -1
    after channels_last layers, 1 after channels_first ones. It may be a list of kept axes.

    Training (`training=True` and `trainable`): y = gamma * (x - mean_B) / sqrt(var_B + eps)
    + beta with the batch mean and biased batch variance, and the moving statistics move by
    moving = moving * momentum + batch * (1 - momentum). Otherwise (including always when
    `trainable` is False): the moving statistics normalize and nothing is updated.

    Args:
        axis: int or list of ints (negative allowed), the kept axes.
        momentum: of the moving averages (0.99).
        epsilon: added to the variance (1e-3).
        center, scale: whether beta / gamma exist.
        beta_initializer, gamma_initializer, moving_mean_initializer,
        moving_variance_initializer, beta_regularizer, gamma_regularizer, beta_constraint,
        gamma_constraint: as Keras.
        synchronized: cross-replica statistics; with one process it changes nothing.
        renorm, renorm_clipping, renorm_momentum, virtual_batch_size, adjustment: accepted and
            stored; non-default values are not supported yet (ValueError).
        fused: Keras 2's implementation switch (None, True or False); the results are the same.

    Example:
    ```python
    y = BatchNormalization()(Input(shape=(8, 8, 16)))   # gamma, beta, moving stats: (16,)
    ```
    """

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones",
                 moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, synchronized=False, renorm=False, renorm_clipping=None,
                 renorm_momentum=0.99, fused=None, virtual_batch_size=None, adjustment=None,
                 **kwargs):
        super().__init__(**kwargs)
        if isinstance(axis, (list, tuple)):
            self.axis = [int(a) for a in axis]
        elif isinstance(axis, int) and not isinstance(axis, bool):
            self.axis = axis
        else:
            raise TypeError("Expected an int or a list/tuple of ints for the argument 'axis', "
                            f"but received: {axis}")
        self.momentum, self.epsilon = float(momentum), float(epsilon)
        self.center, self.scale = bool(center), bool(scale)
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint = constraints.get(beta_constraint)
        self.gamma_constraint = constraints.get(gamma_constraint)
        self.synchronized = bool(synchronized)
        self.renorm, self.renorm_momentum = bool(renorm), float(renorm_momentum)
        self.renorm_clipping = dict(renorm_clipping or {})
        self.fused, self.virtual_batch_size, self.adjustment = fused, virtual_batch_size, adjustment
        self._check_unsupported()
        self.supports_masking = True

    def _check_unsupported(self):
        if self.renorm:
            bad = {k: v for k, v in self.renorm_clipping.items() if k not in _CLIPPING_KEYS}
            if bad:
                raise ValueError("Received invalid keys for `renorm_clipping` argument: "
                                 f"{bad}. Supported values: {_CLIPPING_KEYS}.")
            raise ValueError(f'Layer "{self.name}": renorm=True is not supported yet.')
        if self.virtual_batch_size is not None:
            if not isinstance(self.virtual_batch_size, int) or self.virtual_batch_size <= 0:
                raise ValueError(
                    "`virtual_batch_size` must be a positive integer that divides the true "
                    "batch size of the input tensor. Received: "
                    f"virtual_batch_size={self.virtual_batch_size}")
            raise ValueError(f'Layer "{self.name}": virtual_batch_size is not supported yet '
                             f"(received virtual_batch_size={self.virtual_batch_size}).")
        if self.adjustment is not None:
            raise ValueError(f'Layer "{self.name}": `adjustment` is not supported yet.')
        if self.fused not in (None, True, False):
            raise ValueError(f"`fused` must be None, True or False. Received: fused={self.fused}")
        if self.fused and (isinstance(self.axis, list) and len(self.axis) > 1 or
                           (self.axis[0] if isinstance(self.axis, list) else self.axis)
                           not in (-4, -3, -1, 1, 3, 4)):
            raise ValueError("Passing `fused=True` is only supported when axis is 1 or 3 for "
                             "input rank = 4 or 1 or 4 for input rank = 5. Got axis "
                             f"{self.axis}")

    def build(self, input_shape):
        shape = tuple(input_shape)
        self._axes = kept_axes(self.axis, len(shape))
        if any(shape[a] is None for a in self._axes):
            raise ValueError("Input has undefined `axis` dimension. Received input with shape "
                             f"{shape} and axis={self.axis}")
        if len(self._axes) == 1:
            param_shape = (shape[self._axes[0]],)
        else:  # Keras 2: parameters take the broadcast shape of the kept axes
            param_shape = tuple(d if i in self._axes else 1 for i, d in enumerate(shape))
        self.gamma = self.beta = None
        if self.scale:
            self.gamma = self.add_weight(shape=param_shape, initializer=self.gamma_initializer,
                                         regularizer=self.gamma_regularizer,
                                         constraint=self.gamma_constraint, name="gamma")
        if self.center:
            self.beta = self.add_weight(shape=param_shape, initializer=self.beta_initializer,
                                        regularizer=self.beta_regularizer,
                                        constraint=self.beta_constraint, name="beta")
        self.moving_mean = self.add_weight(shape=param_shape, trainable=False, name="moving_mean",
                                           initializer=self.moving_mean_initializer)
        self.moving_variance = self.add_weight(shape=param_shape, trainable=False,
                                               name="moving_variance",
                                               initializer=self.moving_variance_initializer)
        self.input_spec = InputSpec(ndim=len(shape), axes={a: shape[a] for a in self._axes})
        self.built = True

    def call(self, inputs, training=None, mask=None):
        if mask is not None:
            raise ValueError(f'Layer "{self.name}": masked batch statistics are not supported '
                             "yet.")
        if training and self.trainable:
            y, mean, var = ops.batch_norm_train(inputs, self.gamma, self.beta, axis=self._axes,
                                                epsilon=self.epsilon)
            if not isinstance(mean, KerasTensor):
                self._update_moving(self.moving_mean, mean)
                self._update_moving(self.moving_variance, var)
            return y
        return ops.batch_normalization(inputs, self.moving_mean, self.moving_variance,
                                       axis=self._axes, offset=self.beta, scale=self.gamma,
                                       epsilon=self.epsilon)

    def _update_moving(self, variable, batch_value):
        m = self.momentum
        variable.assign(variable.value * m + batch_value.reshape(variable.shape) * (1.0 - m))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update({
            "axis": self.axis,
            "momentum": self.momentum,
            "epsilon": self.epsilon,
            "center": self.center,
            "scale": self.scale,
            "beta_initializer": initializers.serialize(self.beta_initializer),
            "gamma_initializer": initializers.serialize(self.gamma_initializer),
            "moving_mean_initializer": initializers.serialize(self.moving_mean_initializer),
            "moving_variance_initializer": initializers.serialize(
                self.moving_variance_initializer),
            "beta_regularizer": regularizers.serialize(self.beta_regularizer),
            "gamma_regularizer": regularizers.serialize(self.gamma_regularizer),
            "beta_constraint": constraints.serialize(self.beta_constraint),
            "gamma_constraint": constraints.serialize(self.gamma_constraint),
            "synchronized": self.synchronized,
            "renorm": self.renorm,
            "renorm_clipping": self.renorm_clipping or None,
            "renorm_momentum": self.renorm_momentum,
            "fused": self.fused,
            "virtual_batch_size": self.virtual_batch_size,
            "adjustment": None,
        })
        return config
