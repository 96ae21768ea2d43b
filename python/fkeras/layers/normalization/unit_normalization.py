"""UnitNormalization: scales each sample to unit L2 norm over the given axes."""

from fkeras import ops
from fkeras.layers.layer import Layer
from fkeras.layers.normalization.group_normalization import check_axes


class UnitNormalization(Layer):
    """y = x / ||x||_2 over `axis` (Keras 3: x * min(rsqrt(sum(x^2)), 1e12), so an all-zero
    slice stays zero).

    Args:
        axis: int or list of ints (-1).

    Example:
    ```python
    y = UnitNormalization()(np.array([[3.0, 4.0]]))   # [[0.6, 0.8]]
    ```
    """

    _fk_float_inputs = True

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        if isinstance(axis, (list, tuple)) and all(
                isinstance(a, int) and not isinstance(a, bool) for a in axis):
            self.axis = list(axis)
        elif isinstance(axis, int) and not isinstance(axis, bool):
            self.axis = axis
        else:
            raise TypeError("Invalid value for `axis` argument: expected an int or a "
                            f"list/tuple of ints. Received: axis={axis}")
        self.supports_masking = True
        self.built = True

    def call(self, inputs):
        axes = check_axes(self.axis, len(inputs.shape))
        return ops.normalize(inputs, axis=axes, order=2, epsilon=1e-12)

    def compute_output_shape(self, input_shape):
        check_axes(self.axis, len(input_shape))
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update({"axis": self.axis})
        return config
