"""RMSNormalization: x / sqrt(mean(x^2) + epsilon) * scale over the given axes."""

from fkeras import ops
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.layer import Layer


class RMSNormalization(Layer):
    """Root-mean-square layer normalization (Zhang & Sennrich, 2019), Keras 3's layer.

    `y = x * rsqrt(mean(square(x), axis) + epsilon) * scale`, with a trainable `scale` (ones)
    of the input's size along `axis`. No centring and no offset (unlike LayerNormalization).
    Like Keras 3.15's layer, it does not pass masks on.

    Args:
        axis: int or list of ints, the axes normalized over (default -1).
        epsilon: added to the mean square (default 1e-6).

    Example:
    ```python
    y = RMSNormalization()(np.array([[3.0, 4.0]]))   # ~[[0.8485, 1.1314]]
    ```
    """

    _fk_float_inputs = True

    def __init__(self, axis=-1, epsilon=1e-6, **kwargs):
        super().__init__(**kwargs)
        self.axis, self.epsilon = axis, epsilon

    def build(self, input_shape):
        rank = len(input_shape)
        axes = sorted(self.axis) if isinstance(self.axis, (list, tuple)) else [self.axis]
        for a in axes:
            if not -rank <= a < rank:
                raise ValueError(f"Axis {a} is out of bounds for input shape "
                                 f"{tuple(input_shape)}. Received: axis={self.axis}")
        self.axis = list(axes)
        shape = tuple(input_shape[a] for a in axes)
        if any(d is None for d in shape):
            raise ValueError(f'Layer "{self.name}": the normalized axes {self.axis} must have '
                             f"a defined size. Full input shape received: "
                             f"{tuple(input_shape)}")
        self.scale = self.add_weight(name="scale", shape=shape, initializer="ones")
        self._rank = rank
        self.built = True

    def call(self, x):
        if isinstance(x, KerasTensor):
            return KerasTensor(tuple(x.shape), x.dtype)
        axes = tuple(a % len(x.shape) for a in self.axis)
        mean_square = ops.mean(ops.square(x), axis=axes, keepdims=True)
        y = ops.multiply(x, ops.divide(1.0, ops.sqrt(ops.add(mean_square, self.epsilon))))
        scale = self.scale
        if axes != tuple(range(len(x.shape) - len(axes), len(x.shape))):
            shape = [1] * len(x.shape)
            for a in axes:
                shape[a] = x.shape[a]
            scale = ops.reshape(scale, tuple(shape))
        return ops.multiply(y, scale)

    def compute_output_shape(self, input_shape):
        axes = self.axis if isinstance(self.axis, (list, tuple)) else [self.axis]
        for a in axes:
            if a >= len(input_shape) or a < -len(input_shape):
                raise ValueError(f"Axis {a} is out of bounds for input shape {input_shape}. "
                                 f"Received: axis={self.axis}")
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update({"axis": self.axis, "epsilon": self.epsilon})
        return config
