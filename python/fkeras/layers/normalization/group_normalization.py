"""GroupNormalization (and the axis helpers of the per-sample normalization layers)."""

from fkeras import ops
from fkeras.engine.input_spec import InputSpec
from fkeras.layers.layer import Layer
from fkeras.layers.weight_args import add_arg_weight, serialize_weight_args, store_weight_args


def parse_axis(axis, what="axis"):
    """An int or a list of ints (Keras's TypeError otherwise)."""
    if isinstance(axis, (list, tuple)) and all(isinstance(a, int) and not isinstance(a, bool)
                                               for a in axis):
        return list(axis)
    if isinstance(axis, int) and not isinstance(axis, bool):
        return axis
    raise TypeError(f"Expected an int or a list/tuple of ints for the argument '{what}', but "
                    f"received: {axis!r}")


def check_axes(axis, ndim):
    """Sorted non-negative axes; Keras's out-of-bounds message otherwise."""
    axes = axis if isinstance(axis, list) else [axis]
    for a in axes:
        if a >= ndim or a < -ndim:
            raise ValueError(f"Axis {a} is out of bounds for input shape of rank {ndim}. "
                             f"Received: axis={axis}")
    out = sorted(a % ndim for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"Duplicate axis in axis={axis}")
    return tuple(out)


class GroupNormalization(Layer):
    """Group normalization (Wu & He, 2018), Keras 3 semantics.

    The channels of `axis` are split into `groups` contiguous groups; each sample is normalized
    over every non-batch axis within its group (mean and biased variance), then each channel is
    scaled by gamma and shifted by beta. groups=-1 is instance normalization (one group per
    channel; the config then records the channel count, as Keras does).

    Args:
        groups: positive int dividing the channel count, or -1 (32).
        axis: the channel axis (-1).
        epsilon: added to the variance (1e-3).
        center, scale, beta_initializer, gamma_initializer, beta_regularizer,
        gamma_regularizer, beta_constraint, gamma_constraint: as Keras.

    Example:
    ```python
    y = GroupNormalization(groups=4)(Input(shape=(8, 8, 16)))   # gamma, beta: (16,)
    ```
    """

    _fk_float_inputs = True

    def __init__(self, groups=32, axis=-1, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                 **kwargs):
        if isinstance(groups, bool) or not isinstance(groups, int) or \
                (groups <= 0 and groups != -1):
            raise ValueError("Received an invalid value for argument `groups`, expected a "
                             "positive integer (or `-1` for instance normalization). "
                             f"Received: groups={groups}")
        super().__init__(**kwargs)
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise TypeError(f"Expected an int for the argument 'axis', but received: {axis!r}")
        self.groups, self.axis, self.epsilon = groups, axis, float(epsilon)
        self.center, self.scale = bool(center), bool(scale)
        store_weight_args(self, ("beta", "gamma"), beta_initializer=beta_initializer,
                          gamma_initializer=gamma_initializer, beta_regularizer=beta_regularizer,
                          gamma_regularizer=gamma_regularizer, beta_constraint=beta_constraint,
                          gamma_constraint=gamma_constraint)
        self.supports_masking = True

    def build(self, input_shape):
        shape = tuple(input_shape)
        (self._axis,) = check_axes(self.axis, len(shape))
        if self._axis == 0:
            raise ValueError(f'Layer "{self.name}": `axis` cannot be the batch axis 0.')
        dim = shape[self._axis]
        if dim is None:
            raise ValueError(f"Axis {self.axis} of input tensor should have a defined dimension "
                             f"but the layer received an input with shape {shape}.")
        if self.groups == -1:
            self.groups = dim
        if dim < self.groups:
            raise ValueError(f"Number of groups ({self.groups}) cannot be more than the number "
                             f"of channels ({dim}).")
        if dim % self.groups != 0:
            raise ValueError(f"Number of groups ({self.groups}) must be a multiple of the "
                             f"number of channels ({dim}).")
        self.input_spec = InputSpec(ndim=len(shape), axes={self._axis: dim})
        self.gamma = self.beta = None
        if self.scale:
            self.gamma = add_arg_weight(self, "gamma", (dim,))
        if self.center:
            self.beta = add_arg_weight(self, "beta", (dim,))
        self.built = True

    def call(self, inputs):
        shape = tuple(inputs.shape)
        k, g = self._axis, self.groups
        grouped = shape[:k] + (g, shape[k] // g) + shape[k + 1:]
        if shape[0] is None:
            grouped = (-1,) + grouped[1:]
        norm_axes = tuple(a for a in range(1, len(grouped)) if a != k)
        y = ops.layer_normalization(ops.reshape(inputs, grouped), axis=norm_axes,
                                    epsilon=self.epsilon)
        y = ops.reshape(y, (-1,) + shape[1:] if shape[0] is None else shape)
        bshape = tuple(shape[k] if i == k else 1 for i in range(len(shape)))
        if self.gamma is not None:
            y = ops.multiply(y, ops.reshape(self.gamma, bshape))
        if self.beta is not None:
            y = ops.add(y, ops.reshape(self.beta, bshape))
        return y

    def compute_output_shape(self, input_shape):
        check_axes(self.axis, len(input_shape))
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update({
            "groups": self.groups,
            "axis": self.axis,
            "epsilon": self.epsilon,
            "center": self.center,
            "scale": self.scale,
            **serialize_weight_args(self, ("beta", "gamma"), activity=False),
        })
        return config
