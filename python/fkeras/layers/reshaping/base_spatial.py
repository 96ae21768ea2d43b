"""SpatialResizing: the shared body of ZeroPadding*, Cropping* and UpSampling* (1-, 2- or 3-D)."""

from fkeras import config
from fkeras.engine.input_spec import InputSpec
from fkeras.layers.layer import Layer
from fkeras.layers.reshaping.spatial_args import spatial_axes


class SpatialResizing(Layer):
    """`rank` spatial axes placed by `data_format`, and one amount per axis held in the
    attribute named `arg_name`: a (before, after) pair (padding, cropping) or a factor (size);
    the 1-D layers hold their single amount bare. Config: the amount, then data_format."""

    rank = None
    arg_name = None

    def _setup(self, amounts, data_format):
        self.data_format = config.data_format_or_default(data_format)
        setattr(self, self.arg_name, amounts)
        self.input_spec = InputSpec(ndim=self.rank + 2)
        self.built = True

    def _per_axis(self):
        amounts = getattr(self, self.arg_name)
        return (amounts,) if self.rank == 1 else amounts

    def _axes(self):
        return spatial_axes(self.rank, self.data_format)

    def _widths(self, ndim):
        """(before, after) for each of ndim axes: the pair amounts, (0, 0) off the spatial axes."""
        widths = [(0, 0)] * ndim
        for axis, pair in zip(self._axes(), self._per_axis()):
            widths[axis] = tuple(pair)
        return widths

    def get_config(self):
        config_ = super().get_config()
        config_.update({self.arg_name: getattr(self, self.arg_name),
                        "data_format": self.data_format})
        return config_
