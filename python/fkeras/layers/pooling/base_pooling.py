"""The shared body of the 2-D pooling layers (MaxPooling2D, AveragePooling2D)."""

from fkeras import config
from fkeras.engine.input_spec import InputSpec
from fkeras.layers.layer import Layer
from fkeras.ops.conv import normalize_padding, normalize_tuple, spatial_nhwc
from fkeras.ops.conv_utils import conv_output_size_and_padding


class BasePooling2D(Layer):
    """Pooling over (H, W) windows; `pool_fn` is the fkeras.ops function."""

    pool_fn = None

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None,
                 name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.pool_size = normalize_tuple(pool_size, 2, "pool_size")
        self.strides = self.pool_size if strides is None else normalize_tuple(strides, 2,
                                                                              "strides")
        for arg in ("pool_size", "strides"):
            if min(getattr(self, arg)) <= 0:
                raise ValueError(f"The `{arg}` argument must be a tuple of 2 integers. Received "
                                 f"{arg}={getattr(self, arg)}, including values that do not "
                                 "satisfy `value > 0`")
        self.padding = normalize_padding(padding)
        self.data_format = config.data_format_or_default(data_format)
        self.input_spec = InputSpec(ndim=4)
        self.built = True

    def call(self, inputs):
        return type(self).pool_fn(inputs, self.pool_size, self.strides, self.padding,
                                  self.data_format)

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        n, h, w, c = spatial_nhwc(input_shape, self.data_format)
        out = []
        for size, k, s in zip((h, w), self.pool_size, self.strides):
            o = None if size is None else conv_output_size_and_padding(size, k, s, 1,
                                                                       self.padding)[0]
            if o is not None and o <= 0:
                raise ValueError("Computed output size would be zero or negative. Received: "
                                 f"`inputs.shape={input_shape}` and "
                                 f"`pool_size={self.pool_size}`.")
            out.append(o)
        if self.data_format == "channels_first":
            return (n, c) + tuple(out)
        return (n,) + tuple(out) + (c,)

    def get_config(self):
        config_ = super().get_config()
        config_.update({"pool_size": self.pool_size, "padding": self.padding,
                        "strides": self.strides, "data_format": self.data_format})
        return config_
