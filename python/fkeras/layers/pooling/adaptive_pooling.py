"""AdaptiveAveragePooling1D/2D/3D and AdaptiveMaxPooling1D/2D/3D (Keras 3.15).

Each output cell i along an axis of size L pools the input range
[floor(i * L / out), ceil((i + 1) * L / out)), PyTorch's and Keras 3.15's bins (neighbouring
bins overlap when L is not a multiple of out). Computed by `ops.adaptive_average_pool` /
`ops.adaptive_max_pool` (differentiable).
"""

from fkeras import config as _config
from fkeras.engine.input_spec import InputSpec
from fkeras.layers.layer import Layer
from fkeras.ops.composed_nn import adaptive_average_pool, adaptive_max_pool


def _output_size(output_size, rank):
    if isinstance(output_size, int) and not isinstance(output_size, bool):
        return (output_size,) * rank
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != rank:
            if rank == 1:
                raise ValueError("For 1D input, `output_size` tuple must have length 1. "
                                 f"Received: {output_size}")
            raise TypeError(f"`output_size` must be an integer or tuple of {rank} integers. "
                            f"Received: {output_size} of type {type(output_size)}")
        return tuple(output_size)
    names = {1: "tuple of 1 integer", 2: "(height, width) tuple",
             3: "(depth, height, width) tuple"}
    raise TypeError(f"`output_size` must be an integer or {names[rank]}. "
                    f"Received: {output_size} of type {type(output_size)}")


class BaseAdaptivePooling(Layer):
    """Pools each spatial axis to a fixed `output_size`; see the 1D/2D/3D classes."""

    _fk_float_inputs = True
    rank = None
    pool = None

    def __init__(self, output_size, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.output_size = _output_size(output_size, self.rank)
        for size in self.output_size:
            if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
                raise ValueError(f"`output_size` must hold positive integers. Received: "
                                 f"{output_size}")
        self.data_format = data_format or _config.image_data_format()
        if self.data_format not in ("channels_first", "channels_last"):
            raise ValueError(f"Invalid data_format: {self.data_format}. Expected "
                             "'channels_first' or 'channels_last'.")
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs):
        return type(self).pool(inputs, self.output_size, self.data_format)

    def compute_output_shape(self, input_shape):
        batch = input_shape[0]
        if self.data_format == "channels_last":
            return (batch, *self.output_size, input_shape[-1])
        return (batch, input_shape[1], *self.output_size)

    def get_config(self):
        config = super().get_config()
        config.update({"output_size": self.output_size, "data_format": self.data_format})
        return config


def _doc(kind, rank):
    dims = {1: "length", 2: "height, width", 3: "depth, height, width"}[rank]
    return (f"Adaptive {kind} pooling over {rank}D inputs to a fixed output size (Keras 3.15).\n\n"
            f"    Args:\n        output_size: int or tuple of {rank} ints ({dims}).\n"
            "        data_format: \"channels_last\" (default) or \"channels_first\".\n\n"
            "    Bins: output cell i of an axis of size L pools [floor(i L / out), "
            "ceil((i + 1) L / out)).\n")


def _make(name, rank, kind, pool):
    cls = type(name, (BaseAdaptivePooling,), {"rank": rank, "pool": staticmethod(pool),
                                              "__doc__": _doc(kind, rank),
                                              "__module__": __name__})
    return cls


AdaptiveAveragePooling1D = _make("AdaptiveAveragePooling1D", 1, "average", adaptive_average_pool)
AdaptiveAveragePooling2D = _make("AdaptiveAveragePooling2D", 2, "average", adaptive_average_pool)
AdaptiveAveragePooling3D = _make("AdaptiveAveragePooling3D", 3, "average", adaptive_average_pool)
AdaptiveMaxPooling1D = _make("AdaptiveMaxPooling1D", 1, "max", adaptive_max_pool)
AdaptiveMaxPooling2D = _make("AdaptiveMaxPooling2D", 2, "max", adaptive_max_pool)
AdaptiveMaxPooling3D = _make("AdaptiveMaxPooling3D", 3, "max", adaptive_max_pool)
