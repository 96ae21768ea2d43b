"""MelSpectrogram: a signal's power spectrogram on the mel scale, in dB (Keras 3)."""

import numpy as np

from fkeras import ops
from fkeras.layers.layer import Layer

_MEL_BREAK_FREQUENCY_HERTZ = 700.0
_MEL_HIGH_FREQUENCY_Q = 1127.0


def hertz_to_mel(frequencies):
    """HTK's mel scale: 1127 ln(1 + f / 700)."""
    return _MEL_HIGH_FREQUENCY_Q * np.log(1.0 + np.asarray(frequencies) /
                                          _MEL_BREAK_FREQUENCY_HERTZ)


def linear_to_mel_weight_matrix(num_mel_bins=20, num_spectrogram_bins=129, sampling_rate=8000,
                                lower_edge_hertz=125.0, upper_edge_hertz=3800.0,
                                dtype="float32"):
    """(num_spectrogram_bins, num_mel_bins) triangular filters with peak 1 (TensorFlow's and
    Keras's rule: bins linear on [0, sampling_rate / 2], band edges evenly spaced in mel
    between the edges; the DC bin gets no weight)."""
    linear = np.linspace(0.0, sampling_rate / 2.0, num_spectrogram_bins)[1:]
    bins_mel = hertz_to_mel(linear)[:, None]
    edges = np.linspace(hertz_to_mel(lower_edge_hertz), hertz_to_mel(upper_edge_hertz),
                        num_mel_bins + 2)
    lower, center, upper = edges[None, :-2], edges[None, 1:-1], edges[None, 2:]
    lower_slopes = (bins_mel - lower) / (center - lower)
    upper_slopes = (upper - bins_mel) / (upper - center)
    weights = np.maximum(0.0, np.minimum(lower_slopes, upper_slopes))
    return np.pad(weights, [(1, 0), (0, 0)]).astype(dtype)


class MelSpectrogram(Layer):
    """Mel-frequency spectrogram of a raw audio signal (Keras 3.15's MelSpectrogram).

    |stft|^mag_exp (centred frames, reflect padding, `window`) is mapped to `num_mel_bins`
    triangular mel filters over [min_freq, max_freq], then (power_to_db) converted to decibels
    `10 log10(max(x, min_power)) - 10 log10(max(|ref_power|, min_power))`, floored at the
    maximum over the whole batch minus `top_db`. Differentiable (composed of ops).

    Args:
        fft_length: FFT size (default 2048). sequence_stride: hop (512).
        sequence_length: window length (default fft_length; <= fft_length).
        window: "hann" or "hamming" (periodic) or None. sampling_rate: 16000.
        num_mel_bins: 128. min_freq: 20.0. max_freq: default sampling_rate / 2.
        power_to_db: True. top_db: 80.0. mag_exp: 2.0 (power spectrogram).
        min_power: 1e-10. ref_power: 1.0.

    Input: (batch, samples) or (samples,). Output: (batch, num_mel_bins, frames).

    Example:
    ```python
    y = MelSpectrogram(num_mel_bins=64, sampling_rate=8000, sequence_stride=256,
                       fft_length=2048)(np.random.normal(size=(2, 8000)))  # (2, 64, 32)
    ```
    """

    _fk_float_inputs = True

    def __init__(self, fft_length=2048, sequence_stride=512, sequence_length=None,
                 window="hann", sampling_rate=16000, num_mel_bins=128, min_freq=20.0,
                 max_freq=None, power_to_db=True, top_db=80.0, mag_exp=2.0, min_power=1e-10,
                 ref_power=1.0, **kwargs):
        self.fft_length = fft_length
        self.sequence_stride = sequence_stride
        self.sequence_length = sequence_length or fft_length
        if self.fft_length < self.sequence_length:
            raise ValueError("`fft_length` must be greater than or equal to  "
                             f" `sequence_length`. Received: `sequence_length`="
                             f"{self.sequence_length}, `fft_length`={self.fft_length}.")
        self.window, self.sampling_rate, self.num_mel_bins = window, sampling_rate, num_mel_bins
        self.min_freq = min_freq
        self.max_freq = max_freq or int(sampling_rate / 2)
        self.power_to_db, self.top_db, self.mag_exp = power_to_db, top_db, mag_exp
        self.min_power, self.ref_power = min_power, ref_power
        super().__init__(**kwargs)

    def call(self, inputs):
        real, imag = ops.stft(inputs, self.sequence_length, self.sequence_stride,
                              self.fft_length, window=self.window, center=True)
        spec = ops.power(ops.sqrt(ops.add(ops.square(real), ops.square(imag))), self.mag_exp)
        matrix = linear_to_mel_weight_matrix(self.num_mel_bins, self.fft_length // 2 + 1,
                                             self.sampling_rate, self.min_freq, self.max_freq)
        out = ops.tensordot(spec, matrix, axes=1)
        if self.power_to_db:
            out = self._dbscale(out)
        return ops.swapaxes(out, -1, -2)

    def _dbscale(self, x):
        log_spec = ops.multiply(10.0, ops.log10(ops.maximum(x, self.min_power)))
        ref = 10.0 * np.log10(max(abs(float(self.ref_power)), self.min_power))
        log_spec = ops.subtract(log_spec, ref)
        return ops.maximum(log_spec, ops.subtract(ops.max(log_spec), self.top_db))

    def compute_output_shape(self, input_shape):
        """Keras 3.15's formula for the frame count: (samples + stride + 1) // stride."""
        def frames(n):
            return None if n is None else (n + self.sequence_stride + 1) // self.sequence_stride
        if len(input_shape) == 1:
            return (self.num_mel_bins, frames(input_shape[0]))
        return (input_shape[0], self.num_mel_bins, frames(input_shape[1]))

    def get_config(self):
        config = super().get_config()
        config.update({
            "fft_length": self.fft_length, "sequence_stride": self.sequence_stride,
            "sequence_length": self.sequence_length, "window": self.window,
            "sampling_rate": self.sampling_rate, "num_mel_bins": self.num_mel_bins,
            "min_freq": self.min_freq, "max_freq": self.max_freq,
            "power_to_db": self.power_to_db, "top_db": self.top_db, "mag_exp": self.mag_exp,
            "min_power": self.min_power, "ref_power": self.ref_power,
        })
        return config
