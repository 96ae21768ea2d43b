"""Global average and max pooling over every spatial axis (1-D, 2-D, 3-D)."""

from fkeras import config, ops
from fkeras.engine.input_spec import InputSpec
from fkeras.layers.layer import Layer
from fkeras.layers.pooling.base_pooling import pooling_doc
from fkeras.layers.reshaping.spatial_args import spatial_axes
from fkeras.ops.conv_nd import join_shape, split_shape


class BaseGlobalPooling(Layer):
    """Reduces (N, *spatial, C) to (N, C), or (N, 1, ..., 1, C) with keepdims (channels at
    axis 1 for channels_first)."""

    _fk_float_inputs = True

    rank = None
    reduce_fn = None

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.data_format = config.data_format_or_default(data_format)
        self.keepdims = bool(keepdims)
        self.input_spec = InputSpec(ndim=self.rank + 2)
        self.built = True

    def _axes(self):
        return spatial_axes(self.rank, self.data_format)

    def call(self, inputs):
        return type(self).reduce_fn(inputs, axis=self._axes(), keepdims=self.keepdims)

    def compute_output_shape(self, input_shape):
        n, _, c = split_shape(tuple(input_shape), self.data_format)
        if self.keepdims:
            return join_shape(n, (1,) * self.rank, c, self.data_format)
        return (n, c)

    def get_config(self):
        config_ = super().get_config()
        config_.update({"data_format": self.data_format, "keepdims": self.keepdims})
        return config_


_DOC = """
    Args:
        data_format: "channels_last", "channels_first" or None (the configured default).
        keepdims: keep the spatial axes with length 1.
"""


class GlobalAveragePooling1D(BaseGlobalPooling):
    __doc__ = """The mean over time of (N, T, C) -> (N, C).
    """ + _DOC + """
    `call(inputs, mask=None)`: with a (N, T) mask, the mean over unmasked steps, as Keras.

    Example:
    ```python
    y = GlobalAveragePooling1D()(Input(shape=(10, 4)))   # y.shape == (None, 4)
    ```
    """

    rank = 1
    reduce_fn = staticmethod(ops.mean)

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(data_format, keepdims, **kwargs)
        self.supports_masking = True

    def call(self, inputs, mask=None):
        if mask is None:
            return super().call(inputs)
        axis = self._axes()[0]
        m = ops.expand_dims(ops.multiply(mask, 1.0), 1 if axis == 2 else -1)
        total = ops.sum(ops.multiply(inputs, m), axis=axis, keepdims=self.keepdims)
        return ops.divide(total, ops.sum(m, axis=axis, keepdims=self.keepdims))

    def compute_mask(self, inputs, mask=None):
        return None


class GlobalAveragePooling2D(BaseGlobalPooling):
    __doc__ = pooling_doc("The mean over (H, W): (N, H, W, C) -> (N, C).", _DOC,
                          "y = GlobalAveragePooling2D()(Input(shape=(8, 8, 3)))   "
                          "# y.shape == (None, 3)")

    rank = 2
    reduce_fn = staticmethod(ops.mean)


class GlobalAveragePooling3D(BaseGlobalPooling):
    __doc__ = pooling_doc("The mean over (D, H, W): (N, D, H, W, C) -> (N, C).", _DOC,
                          "y = GlobalAveragePooling3D()(Input(shape=(4, 4, 4, 3)))   "
                          "# y.shape == (None, 3)")

    rank = 3
    reduce_fn = staticmethod(ops.mean)


class GlobalMaxPooling1D(BaseGlobalPooling):
    __doc__ = pooling_doc("The maximum over time: (N, T, C) -> (N, C).", _DOC,
                          "y = GlobalMaxPooling1D()(Input(shape=(10, 4)))   "
                          "# y.shape == (None, 4)")

    rank = 1
    reduce_fn = staticmethod(ops.max)


class GlobalMaxPooling2D(BaseGlobalPooling):
    __doc__ = pooling_doc("The maximum over (H, W): (N, H, W, C) -> (N, C).", _DOC,
                          "y = GlobalMaxPooling2D(keepdims=True)(Input(shape=(8, 8, 3)))   "
                          "# (None, 1, 1, 3)")

    rank = 2
    reduce_fn = staticmethod(ops.max)


class GlobalMaxPooling3D(BaseGlobalPooling):
    __doc__ = pooling_doc("The maximum over (D, H, W): (N, D, H, W, C) -> (N, C).", _DOC,
                          "y = GlobalMaxPooling3D()(Input(shape=(4, 4, 4, 3)))   "
                          "# y.shape == (None, 3)")

    rank = 3
    reduce_fn = staticmethod(ops.max)
