"""STFTSpectrogram: the STFT of each channel as 1-D convolutions with STFT kernels (Keras 3)."""

import math
import warnings

import numpy as np

from fkeras import config, initializers, ops
from fkeras.engine.input_spec import InputSpec
from fkeras.layers.layer import Layer
from fkeras.ops.conv_utils import conv_output_size_and_padding
from fkeras.utils.windows import check_window_name

_MODES = ["log", "magnitude", "psd", "real", "imag", "angle", "stft"]
_EPSILON = 1e-7


class STFTSpectrogram(Layer):
    """Spectrogram of every channel of a (batch, time, channels) signal (Keras 3.15).

    Frames of `frame_length` samples every `frame_step` are multiplied by trainable kernels
    `real_kernel` / `imag_kernel` of shape (frame_length, 1, fft_length // 2 + 1), initialized
    by `initializers.STFT` (window and scaling folded in), as a strided 1-D convolution.

    Args:
        mode: "log" (log magnitude), "magnitude", "psd" (power, the inner bins doubled),
            "real", "imag", "angle", or "stft" (real bins then imaginary bins).
        frame_length: window length in samples.
        frame_step: hop in samples (default frame_length // 2); 1 <= step <= frame_length.
        fft_length: FFT size (default: the next power of two >= frame_length).
        window: a window name (see `initializers.STFT`), an array, or None.
        periodic: periodic window (True) or symmetric (False).
        scaling: "density", "spectrum" or None.
        padding: "valid" or "same" (of the convolution).
        expand_dims: keep channels apart: (batch, time, freq, channels) instead of
            (batch, time, channels * freq).
        data_format: "channels_last" (batch, time, channels) or "channels_first".

    Example:
    ```python
    y = STFTSpectrogram(frame_length=64, frame_step=16)(np.random.rand(2, 1000, 1))
    # y.shape == (2, 59, 33)
    ```
    """

    _fk_float_inputs = True

    def __init__(self, mode="log", frame_length=256, frame_step=None, fft_length=None,
                 window="hann", periodic=False, scaling="density", padding="valid",
                 expand_dims=False, data_format=None, **kwargs):
        if frame_step is not None and (frame_step > frame_length or frame_step < 1):
            raise ValueError("`frame_step` should be a positive integer not greater than "
                             f"`frame_length`. Received frame_step={frame_step}, "
                             f"frame_length={frame_length}")
        if fft_length is not None and fft_length < frame_length:
            raise ValueError("`fft_length` should be not less than `frame_length`. "
                             f"Received fft_length={fft_length}, frame_length={frame_length}")
        if fft_length is not None and (fft_length & -fft_length) != fft_length:
            warnings.warn("`fft_length` is recommended to be a power of two. "
                          f"Received fft_length={fft_length}")
        if mode not in _MODES:
            raise ValueError(f"Output mode is invalid, it must be one of {', '.join(_MODES)}. "
                             f"Received: mode={mode}")
        if scaling is not None and scaling not in ["density", "spectrum"]:
            raise ValueError("Scaling is invalid, it must be `None`, 'density' or 'spectrum'. "
                             f"Received scaling={scaling}")
        if padding not in ["valid", "same"]:
            raise ValueError("Padding is invalid, it should be 'valid', 'same'. "
                             f"Received: padding={padding}")
        if isinstance(window, str):
            check_window_name(window)
        super().__init__(**kwargs)
        self.mode, self.frame_length, self.frame_step = mode, frame_length, frame_step
        self._frame_step = frame_step or frame_length // 2
        self.fft_length = fft_length
        self._fft_length = fft_length or 2 ** int(math.ceil(math.log2(frame_length)))
        self.window, self.periodic, self.scaling = window, periodic, scaling
        self.padding, self.expand_dims = padding, expand_dims
        self.data_format = config.data_format_or_default(data_format)
        self.input_spec = InputSpec(ndim=3)

    def build(self, input_shape):
        shape = (self.frame_length, 1, self._fft_length // 2 + 1)
        if self.mode != "imag":
            self.real_kernel = self.add_weight(
                name="real_kernel", shape=shape,
                initializer=initializers.STFT("real", self.window, self.scaling, self.periodic))
        if self.mode != "real":
            self.imag_kernel = self.add_weight(
                name="imag_kernel", shape=shape,
                initializer=initializers.STFT("imag", self.window, self.scaling, self.periodic))
        self.built = True

    def _conv(self, inputs, kernel):
        """(batch, channels, freq, frames) from one kernel."""
        last = self.data_format == "channels_last"
        if last:
            _, time, channels = inputs.shape
            x = ops.reshape(ops.transpose(inputs, (0, 2, 1)), (-1, time, 1))
        else:
            _, channels, time = inputs.shape
            x = ops.reshape(inputs, (-1, 1, time))
        y = ops.conv(x, kernel, strides=self._frame_step, padding=self.padding,
                     data_format=self.data_format)
        if last:
            y = ops.transpose(y, (0, 2, 1))
        return ops.reshape(y, (-1, channels) + tuple(y.shape[1:]))

    def _arrange(self, y):
        """(batch, channels, freq, frames) to the output layout."""
        _, channels, freq, frames = y.shape
        if self.data_format == "channels_last":
            if self.expand_dims:
                return ops.transpose(y, (0, 3, 2, 1))
            return ops.transpose(ops.reshape(y, (-1, channels * freq, frames)), (0, 2, 1))
        if self.expand_dims:
            return ops.transpose(y, (0, 1, 3, 2))
        return ops.reshape(y, (-1, channels * freq, frames))

    def call(self, inputs):
        dtype = str(inputs.dtype)
        if dtype not in ("float16", "float32", "float64"):
            raise TypeError("Invalid input type. Expected `float16`, `float32` or `float64`. "
                            f"Received: input type={dtype}")
        real = self._conv(inputs, self.real_kernel) if self.mode != "imag" else None
        imag = self._conv(inputs, self.imag_kernel) if self.mode != "real" else None
        if self.mode == "real":
            return self._arrange(real)
        if self.mode == "imag":
            return self._arrange(imag)
        if self.mode == "angle":
            return self._arrange(ops.arctan2(imag, real))
        if self.mode == "stft":
            return self._arrange(ops.concatenate([real, imag], axis=2))
        power = ops.add(ops.square(real), ops.square(imag))
        if self.mode == "psd":
            inner = ops.pad(ops.getitem(power, (slice(None), slice(None), slice(1, -1))),
                            [[0, 0], [0, 0], [1, 1], [0, 0]])
            return self._arrange(ops.add(power, inner))
        magnitude = self._arrange(ops.sqrt(ops.maximum(power, _EPSILON)))
        if self.mode == "magnitude":
            return magnitude
        return ops.log(ops.maximum(magnitude, _EPSILON))

    def compute_output_shape(self, input_shape):
        last = self.data_format == "channels_last"
        batch, time, channels = (input_shape[0], input_shape[1], input_shape[2]) if last else \
            (input_shape[0], input_shape[2], input_shape[1])
        freq = (self._fft_length // 2 + 1) * (2 if self.mode == "stft" else 1)
        frames = None if time is None else conv_output_size_and_padding(
            time, self.frame_length, self._frame_step, 1, self.padding)[0]
        if self.expand_dims:
            return (batch, frames, freq, channels) if last else (batch, channels, frames, freq)
        width = None if channels is None else channels * freq
        return (batch, frames, width) if last else (batch, width, frames)

    def get_config(self):
        config_ = super().get_config()
        config_.update({"mode": self.mode, "frame_length": self.frame_length,
                        "frame_step": self.frame_step, "fft_length": self.fft_length,
                        "window": _json_window(self.window), "periodic": self.periodic,
                        "scaling": self.scaling, "padding": self.padding,
                        "data_format": self.data_format, "expand_dims": self.expand_dims})
        return config_


def _json_window(window):
    """A window array as a list (JSON-safe in `.keras` files); names and None unchanged."""
    if window is None or isinstance(window, str):
        return window
    return [float(w) for w in np.asarray(window).ravel()]
