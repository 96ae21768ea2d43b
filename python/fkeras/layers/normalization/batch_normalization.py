"""BatchNormalization: normalizes over every axis but the kept (feature) axis or axes.

Keras 3 numerics (momentum rule, biased variance) with both generations' arguments: Keras 3's
`renorm` and `synchronized`, and tf_keras 2.x's `fused`, `virtual_batch_size` and `adjustment`.
The plain training case runs the fused batch-norm kernel; renorm, ghost batches, adjustment and
masks compose it (or `moments`) with elementwise ops (see batch_norm_modes.py).
"""

import warnings

import numpy as np

from fkeras import constraints, initializers, ops, regularizers
from fkeras.distribution import _state as _dist
from fkeras.engine.input_spec import InputSpec
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.layer import Layer
from fkeras.layers.normalization import batch_norm_modes as modes
from fkeras.ops.normalization import kept_axes


class BatchNormalization(Layer):
    """Batch normalization (Keras 3 numerics, Keras 2 and Keras 3 arguments).

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
        renorm: Batch Renormalization (Ioffe 2017): in training y = (xhat * r + d) * gamma +
            beta with r = sigma_B / renorm_stddev and d = (mu_B - renorm_mean) / renorm_stddev,
            both clipped and without gradient. Adds the weights moving_stddev, renorm_mean and
            renorm_stddev; moving_variance = relu(moving_stddev^2 - epsilon).
        renorm_clipping: dict with optional "rmax", "rmin", "dmax" (missing: inf, 0, inf).
        renorm_momentum: momentum of renorm_mean and renorm_stddev (0.99).
        synchronized: under a DataParallel distribution, the batch statistics of the global
            batch (moments allreduced across processes, in the forward and the backward);
            False keeps each process's own statistics; with one process it changes nothing.
        fused: tf_keras's switch: None uses the fused kernel when it can, True requires it
            (ValueError with renorm, virtual_batch_size, adjustment or a mask), False never
            uses it (batch moments, then the normalization op). Results are the same.
        virtual_batch_size: Ghost Batch Normalization (tf_keras): the batch B is reshaped to
            (virtual_batch_size, B / virtual_batch_size, ...) and each of the B / v ghost
            batches (samples k, k + B/v, ...) is normalized with its own statistics; the
            moving statistics move towards the mean over ghost batches of their means and
            variances. Parameters get tf_keras's shape (1, 1, ..., C).
        adjustment: tf_keras: a callable taking the input shape and returning (scale, bias),
            applied to the normalized values before gamma and beta, in training only.

    Example:
    ```python
    y = BatchNormalization()(Input(shape=(8, 8, 16)))   # gamma, beta, moving stats: (16,)
    ```
    """

    _fk_float_inputs = True

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones",
                 moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, renorm=False, renorm_clipping=None, renorm_momentum=0.99,
                 synchronized=False, fused=None, virtual_batch_size=None, adjustment=None,
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
        self.renorm_clipping = renorm_clipping
        self.fused, self.virtual_batch_size, self.adjustment = fused, virtual_batch_size, adjustment
        modes.check_arguments(self)
        self.supports_masking = True

    def build(self, input_shape):
        shape = tuple(input_shape)
        self._axes = kept_axes(self.axis, len(shape))
        if any(shape[a] is None for a in self._axes):
            raise ValueError("Input has undefined `axis` dimension. Received input with shape "
                             f"{shape} and axis={self.axis}")
        if self.virtual_batch_size is not None and 0 in self._axes:
            raise ValueError("When using `virtual_batch_size`, the batch dimension must be 0 "
                             f"and thus axis cannot include 0. Received axis={self.axis}")
        if len(self._axes) == 1 and self.virtual_batch_size is None:
            param_shape = (shape[self._axes[0]],)
        else:  # Keras 2: parameters take the broadcast shape of the kept axes
            param_shape = tuple(d if i in self._axes else 1 for i, d in enumerate(shape))
            if self.virtual_batch_size is not None:  # tf_keras: the ghost-batch axis
                param_shape = param_shape[:1] + (1,) + param_shape[1:]
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
        if self.renorm:
            stddev_init = modes.sqrt_initializer(self.moving_variance_initializer)
            self.moving_stddev = self.add_weight(shape=param_shape, trainable=False,
                                                 name="moving_stddev", initializer=stddev_init)
            self.renorm_mean = self.add_weight(shape=param_shape, trainable=False,
                                               name="renorm_mean",
                                               initializer=self.moving_mean_initializer)
            self.renorm_stddev = self.add_weight(shape=param_shape, trainable=False,
                                                 name="renorm_stddev", initializer=stddev_init)
        self.input_spec = InputSpec(ndim=len(shape), axes={a: shape[a] for a in self._axes})
        self.built = True

    def call(self, inputs, training=None, mask=None):
        if not (training and self.trainable):
            return ops.batch_normalization(inputs, self.moving_mean, self.moving_variance,
                                           axis=self._axes, offset=self.beta, scale=self.gamma,
                                           epsilon=self.epsilon)
        if mask is not None:
            return modes.masked_training(self, inputs, mask)
        if self.renorm or self.virtual_batch_size is not None or self.adjustment is not None:
            return modes.composed_training(self, inputs)
        if self._fused_training():
            y, mean, var = ops.batch_norm_train(inputs, self.gamma, self.beta, axis=self._axes,
                                                epsilon=self.epsilon)
        else:  # fused=False, or synchronized statistics under a distribution
            sync = self.synchronized and _dist.COMM is not None
            reduce_axes = tuple(a for a in range(len(inputs.shape)) if a not in self._axes)
            mean, var = ops.moments(inputs, reduce_axes, synchronized=sync)
            y = ops.batch_normalization(inputs, mean, var, axis=self._axes, offset=self.beta,
                                        scale=self.gamma, epsilon=self.epsilon)
        if not isinstance(mean, KerasTensor):
            self._update_moving(self.moving_mean, mean)
            self._update_moving(self.moving_variance, var)
        return y

    def _fused_training(self):
        """Whether an unmasked training call is the single `batch_norm_train` op: not renorm,
        ghost batches, `adjustment`, `fused=False` or synchronized statistics under a
        distribution (trainers/plan_fusion.py fuses a following ReLU only then)."""
        return not (self.renorm or self.virtual_batch_size is not None
                    or self.adjustment is not None or self.fused is False
                    or (self.synchronized and _dist.COMM is not None))

    def _update_moving(self, variable, batch_value, momentum=None):
        m = self.momentum if momentum is None else momentum
        dev = variable._device
        value = getattr(batch_value, "_value", batch_value)
        if dev.is_host:
            value = np.asarray(value).reshape(variable.shape)
        else:
            value = dev.asarray(value).reshape(variable.shape)
        variable.assign(dev.axpby(variable._value, value, m, 1.0 - m))

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
            "renorm_clipping": self.renorm_clipping,
            "renorm_momentum": self.renorm_momentum,
            "fused": self.fused,
            "virtual_batch_size": self.virtual_batch_size,
            "adjustment": None,
        })
        if self.adjustment is not None:
            warnings.warn(f'The `adjustment` function of layer "{self.name}" cannot be '
                          "serialized and has been omitted from the layer config.",
                          stacklevel=2)
        return config
