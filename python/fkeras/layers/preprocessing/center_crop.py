"""CenterCrop: the central (height, width) window, or a resize when the image is smaller."""

from fkeras import ops
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.layer import Layer
from fkeras.layers.preprocessing import image_args
from fkeras.layers.preprocessing.resize_op import image_resize


class CenterCrop(Layer):
    """Crops the centre of images (rank 4 batch or rank 3 image) to `(height, width)`.

    As Keras 3: the window starts at `(size - target) // 2`; when the image is smaller than the
    target along either axis, it is instead cropped to the target aspect ratio and resized
    with bilinear interpolation (`keras.utils.smart_resize`). The output is float32 (integer
    images are cast).

    Args:
        height, width: the output size.
        data_format: "channels_last" or "channels_first" (default: `image_data_format()`).

    Example:
    ```python
    y = CenterCrop(224, 224)(images)   # (N, 224, 224, C)
    ```
    """

    _fk_float_inputs = True

    def __init__(self, height, width, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.height = image_args.positive_int(height, "height", self.name)
        self.width = image_args.positive_int(width, "width", self.name)
        self.data_format = image_args.data_format_of(data_format, self.name)

    def call(self, inputs):
        shape = image_args.shape_of(inputs)
        image_args.check_rank(shape, self.name)
        if isinstance(inputs, KerasTensor):
            return KerasTensor(self.compute_output_shape(shape), self.dtype)
        inputs = ops.cast(inputs, self.dtype)
        h_axis, w_axis = image_args.hw_axes(len(shape), self.data_format)
        h_diff, w_diff = shape[h_axis] - self.height, shape[w_axis] - self.width
        if h_diff >= 0 and w_diff >= 0:
            start = [0] * len(shape)
            start[h_axis], start[w_axis] = h_diff // 2, w_diff // 2
            return ops.slice(inputs, start,
                             image_args.with_size(shape, (self.height, self.width),
                                                  self.data_format))
        x = image_args.to_nhwc(inputs, self.data_format)
        y = image_resize(x, (self.height, self.width), "bilinear", mode="crop")
        return image_args.from_nhwc(y, len(shape), self.data_format)

    def compute_output_shape(self, input_shape):
        if len(input_shape) not in (3, 4) or isinstance(input_shape[0], (list, tuple)):
            raise ValueError(f'Layer "{self.name}": `input_shape` must be a non-nested tuple '
                             "or list of rank-1 with size 3 (unbatched) or 4 (batched). "
                             f"Received: {tuple(input_shape)}")
        return image_args.with_size(input_shape, (self.height, self.width), self.data_format)

    def get_config(self):
        config = super().get_config()
        config.update({"height": self.height, "width": self.width,
                       "data_format": self.data_format})
        return config
