"""PReLU: relu(x) - alpha * relu(-x) with a learned alpha per (non-shared) input position."""

from fkeras import constraints, initializers, regularizers
from fkeras.engine.input_spec import InputSpec
from fkeras.layers.layer import Layer
from fkeras.ops import math as fmath


class PReLU(Layer):
    """Parametric Rectified Linear Unit: f(x) = x for x >= 0, alpha * x otherwise.

    `alpha` has the input's shape without the batch axis, with size 1 along `shared_axes`.

    Args:
        alpha_initializer: default "Zeros".
        alpha_regularizer, alpha_constraint: as Keras.
        shared_axes: int or list of ints (1-based, counting the batch axis as 0) along which
            alpha is shared; e.g. [1, 2] for one alpha per channel after a Conv2D.

    Example:
    ```python
    y = PReLU(shared_axes=[1, 2])(Input(shape=(8, 8, 3)))   # alpha.shape == (1, 1, 3)
    ```
    """

    _fk_float_inputs = True

    def __init__(self, alpha_initializer="Zeros", alpha_regularizer=None, alpha_constraint=None,
                 shared_axes=None, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.alpha_initializer = initializers.get(alpha_initializer)
        self.alpha_regularizer = regularizers.get(alpha_regularizer)
        self.alpha_constraint = constraints.get(alpha_constraint)
        if shared_axes is None:
            self.shared_axes = None
        elif not isinstance(shared_axes, (list, tuple)):
            self.shared_axes = [shared_axes]
        else:
            self.shared_axes = list(shared_axes)
        for a in self.shared_axes or ():
            if isinstance(a, bool) or not isinstance(a, int) or a < 1:
                raise ValueError(f'Invalid `shared_axes` for layer "{self.name}": each entry '
                                 "must be an int >= 1 (axis 0 is the batch axis). Received: "
                                 f"shared_axes={shared_axes}")

    def build(self, input_shape):
        rank = len(input_shape)
        param_shape = list(input_shape[1:])
        for i in self.shared_axes or ():
            if i >= rank:
                raise ValueError(f'Invalid `shared_axes` for layer "{self.name}": axis {i} is '
                                 f"out of range for an input of rank {rank}. Received: "
                                 f"shared_axes={self.shared_axes}, input_shape="
                                 f"{tuple(input_shape)}")
            param_shape[i - 1] = 1
        if None in param_shape:
            raise ValueError("Shapes used to initialize variables must be fully-defined (no "
                             f"`None` dimensions). Received: shape={tuple(param_shape)} for "
                             f"variable path='{self.name}/alpha' (layer \"{self.name}\": share "
                             "the unknown axes with `shared_axes`)")
        self.alpha = self.add_weight(shape=param_shape, name="alpha",
                                     initializer=self.alpha_initializer,
                                     regularizer=self.alpha_regularizer,
                                     constraint=self.alpha_constraint)
        axes = {i: input_shape[i] for i in range(1, rank)
                if i not in (self.shared_axes or ())}
        self.input_spec = InputSpec(ndim=rank, axes=axes)
        self.built = True

    def call(self, inputs):
        return fmath.prelu(inputs, self.alpha)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update({
            "alpha_initializer": initializers.serialize(self.alpha_initializer),
            "alpha_regularizer": regularizers.serialize(self.alpha_regularizer),
            "alpha_constraint": constraints.serialize(self.alpha_constraint),
            "shared_axes": self.shared_axes,
        })
        return config
