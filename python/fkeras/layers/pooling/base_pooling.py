"""The shared body of the max and average pooling layers over 1, 2 or 3 spatial dimensions."""

from fkeras import config
from fkeras.engine.input_spec import InputSpec
from fkeras.layers.layer import Layer
from fkeras.layers.reshaping.spatial_args import standardize_tuple
from fkeras.ops.conv import normalize_padding
from fkeras.ops.conv_nd import join_shape, split_shape
from fkeras.ops.conv_utils import conv_output_size_and_padding


class BasePooling(Layer):
    """Pooling over `rank`-D windows; `pool_fn` is the fkeras.ops function for the rank."""

    _fk_float_inputs = True

    rank = 2
    pool_fn = None

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, name=None,
                 **kwargs):
        super().__init__(name=name, **kwargs)
        rank = self.rank
        self.pool_size = standardize_tuple(pool_size, rank, "pool_size")
        self.strides = self.pool_size if strides is None else standardize_tuple(strides, rank,
                                                                                 "strides")
        self.padding = normalize_padding(padding)
        self.data_format = config.data_format_or_default(data_format)
        self.input_spec = InputSpec(ndim=rank + 2)
        self.built = True

    def call(self, inputs):
        return type(self).pool_fn(inputs, self.pool_size, self.strides, self.padding,
                                  self.data_format)

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        n, spatial, c = split_shape(input_shape, self.data_format)
        out = []
        for size, k, s in zip(spatial, self.pool_size, self.strides):
            o = None if size is None else conv_output_size_and_padding(size, k, s, 1,
                                                                       self.padding)[0]
            if o is not None and o <= 0:
                raise ValueError("Computed output size would be zero or negative. Received: "
                                 f"`inputs.shape={input_shape}` and "
                                 f"`pool_size={self.pool_size}`.")
            out.append(o)
        return join_shape(n, out, c, self.data_format)

    def get_config(self):
        config_ = super().get_config()
        config_.update({"pool_size": self.pool_size, "padding": self.padding,
                        "strides": self.strides, "data_format": self.data_format})
        return config_


class Pooling1D(BasePooling):
    """BasePooling over 1-D windows (N, T, C), Keras 2's default pool_size 2."""

    rank = 1

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, name=None,
                 **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name=name, **kwargs)


class Pooling2D(BasePooling):
    """BasePooling over 2-D windows, Keras 2's default pool_size (2, 2)."""

    rank = 2

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None,
                 name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name=name, **kwargs)


class Pooling3D(BasePooling):
    """BasePooling over 3-D windows, Keras 2's default pool_size (2, 2, 2)."""

    rank = 3

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None,
                 name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name=name, **kwargs)


def pooling_doc(summary, args, example):
    """A pooling layer's docstring: the summary line, the shared Args block, one example line."""
    return (f"{summary}\n    {args}\n    Example:\n    ```python\n    {example}\n    ```\n    ")


# The 2-D layers' former base name.
BasePooling2D = BasePooling
