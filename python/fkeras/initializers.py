"""Weight initializers (Keras 3 names, defaults and formulas), seeded.

An initializer with a `seed` gives the same values every call; without one it draws from the
global generator that `fkeras.utils.set_random_seed` seeds.
"""

import abc
import math

import numpy as np

from fkeras.utils import random as _random
from fkeras.utils.serialization import make_get, serialize_object


class Initializer(abc.ABC):
    """Base class of initializers: subclasses implement `__call__(shape, dtype)`."""

    def __call__(self, shape, dtype=None):
        """An array of `shape` (and `dtype`) holding the initial values (subclasses implement
        it; as in Keras 3 the class is not abstract, the call raises)."""
        raise NotImplementedError("Initializer subclasses must implement the `__call__()` "
                                  "method.")

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class Constant(Initializer):
    def __init__(self, value=0.0):
        self.value = value

    def __call__(self, shape, dtype=None):
        return np.full(shape, self.value, dtype=np.float32)

    def get_config(self):
        return {"value": self.value}


class Zeros(Initializer):
    def __call__(self, shape, dtype=None):
        return np.zeros(shape, dtype=np.float32)


class Ones(Initializer):
    def __call__(self, shape, dtype=None):
        return np.ones(shape, dtype=np.float32)


class Identity(Initializer):
    def __init__(self, gain=1.0):
        self.gain = gain

    def __call__(self, shape, dtype=None):
        if len(shape) != 2:
            raise ValueError(f"Identity initializer needs a 2-D shape, received {shape}.")
        return (self.gain * np.eye(*shape)).astype(np.float32)

    def get_config(self):
        return {"gain": self.gain}


class _Random(Initializer):
    def __init__(self, seed=None):
        self.seed = seed

    def _rng(self):
        return _random.make_rng(self.seed)

    def get_config(self):
        return {"seed": self.seed}


class RandomNormal(_Random):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def __call__(self, shape, dtype=None):
        return _normal32(self._rng(), shape, self.mean, self.stddev)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class RandomUniform(_Random):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        super().__init__(seed)
        self.minval, self.maxval = minval, maxval

    def __call__(self, shape, dtype=None):
        return _uniform32(self._rng(), shape, self.minval, self.maxval)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


# Draws are made in float32 directly (NumPy's float32 generators): the weights are float32,
# and drawing float64 then casting took ~9x longer (1.5 s for VGG19's largest kernel).
def _affine32(out, shift, scale):
    out *= np.float32(scale)
    out += np.float32(shift)
    return out


def _normal32(rng, shape, mean, stddev):
    return _affine32(rng.standard_normal(shape, dtype=np.float32), mean, stddev)


def _uniform32(rng, shape, low, high):
    return _affine32(rng.random(shape, dtype=np.float32), low, high - low)


def _truncated_normal(rng, shape, mean, stddev):
    # Resample values beyond two standard deviations (Keras's truncated normal).
    out = rng.standard_normal(shape, dtype=np.float32)
    bad = np.abs(out) > 2.0
    while bad.any():
        out[bad] = rng.standard_normal(int(bad.sum()), dtype=np.float32)
        bad = np.abs(out) > 2.0
    return _affine32(out, mean, stddev)


class TruncatedNormal(_Random):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def __call__(self, shape, dtype=None):
        return _truncated_normal(self._rng(), shape, self.mean, self.stddev)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


def compute_fans(shape, input_axes=None, output_axes=None):
    """(fan_in, fan_out) as Keras computes them (conv kernels: receptive field times channels).

    With both `input_axes` and `output_axes` given, the fans are the products of those axes'
    sizes (Keras 3.15)."""
    shape = tuple(shape)
    if input_axes is not None and output_axes is not None:
        return (int(np.prod([shape[a] for a in input_axes])),
                int(np.prod([shape[a] for a in output_axes])))
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = int(np.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive


class VarianceScaling(_Random):
    """Samples with a variance of `scale / fan` (keras.initializers.VarianceScaling).

    Args:
        scale: positive scaling factor.
        mode: "fan_in", "fan_out" or "fan_avg".
        distribution: "truncated_normal" (or "normal"), "untruncated_normal" or "uniform".
        seed: an int for reproducible values.
        input_axes, output_axes: optional lists of axes whose sizes give fan_in and fan_out
            (both needed; otherwise Keras's dense/conv rule).
    """

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 input_axes=None, output_axes=None):
        super().__init__(seed)
        self.input_axes = None if input_axes is None else list(input_axes)
        self.output_axes = None if output_axes is None else list(output_axes)
        if scale <= 0:
            raise ValueError(f"Argument `scale` must be positive. Received: scale={scale}")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` argument: {mode}")
        distribution = distribution.lower()
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError(f"Invalid `distribution` argument: {distribution}")
        self.scale, self.mode, self.distribution = scale, mode, distribution

    def __call__(self, shape, dtype=None):
        fan_in, fan_out = compute_fans(shape, self.input_axes, self.output_axes)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, fan)
        rng = self._rng()
        if self.distribution == "truncated_normal":
            return _truncated_normal(rng, shape, 0.0, math.sqrt(scale) / 0.87962566103423978)
        if self.distribution == "untruncated_normal":
            return _normal32(rng, shape, 0.0, math.sqrt(scale))
        limit = math.sqrt(3.0 * scale)
        return _uniform32(rng, shape, -limit, limit)

    def get_config(self):
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution,
                "seed": self.seed, "input_axes": self.input_axes,
                "output_axes": self.output_axes}


def _vs(name, scale, mode, distribution):
    class _Named(VarianceScaling):
        def __init__(self, seed=None, input_axes=None, output_axes=None):
            super().__init__(scale=scale, mode=mode, distribution=distribution, seed=seed,
                             input_axes=input_axes, output_axes=output_axes)

        def get_config(self):
            return {"seed": self.seed, "input_axes": self.input_axes,
                    "output_axes": self.output_axes}

    _Named.__name__ = _Named.__qualname__ = name
    return _Named


GlorotUniform = _vs("GlorotUniform", 1.0, "fan_avg", "uniform")
GlorotNormal = _vs("GlorotNormal", 1.0, "fan_avg", "truncated_normal")
HeUniform = _vs("HeUniform", 2.0, "fan_in", "uniform")
HeNormal = _vs("HeNormal", 2.0, "fan_in", "truncated_normal")
LecunUniform = _vs("LecunUniform", 1.0, "fan_in", "uniform")
LecunNormal = _vs("LecunNormal", 1.0, "fan_in", "truncated_normal")


class Orthogonal(_Random):
    def __init__(self, gain=1.0, seed=None):
        super().__init__(seed)
        self.gain = gain

    def __call__(self, shape, dtype=None):
        if len(shape) < 2:
            raise ValueError(f"Orthogonal initializer needs a shape of rank >= 2, received {shape}.")
        rows = int(np.prod(shape[:-1]))
        cols = shape[-1]
        flat = (max(rows, cols), min(rows, cols))
        a = self._rng().normal(0.0, 1.0, flat)
        from fkeras.backend import numpy_blas  # lazily: ctypes and a /proc read, first use only

        with numpy_blas.single_threaded():  # no OpenBLAS thread left spinning beside our kernels
            q, r = np.linalg.qr(a)
        q *= np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return (self.gain * q.reshape(shape)).astype(np.float32)

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed}


ALIASES = {
    "zeros": Zeros, "ones": Ones, "constant": Constant, "identity": Identity,
    "random_normal": RandomNormal, "random_uniform": RandomUniform,
    "truncated_normal": TruncatedNormal, "variance_scaling": VarianceScaling,
    "glorot_uniform": GlorotUniform, "glorot_normal": GlorotNormal,
    "he_uniform": HeUniform, "he_normal": HeNormal, "lecun_uniform": LecunUniform,
    "lecun_normal": LecunNormal, "orthogonal": Orthogonal,
    "uniform": RandomUniform, "normal": RandomNormal,  # Keras 3 aliases (Embedding's default)
}
CLASSES = {c.__name__: c for c in set(ALIASES.values())}
CLASSES.update({"RandomNormal": RandomNormal, "Zeros": Zeros, "Ones": Ones})
# Keras 3 exports every class under its lowercase name too (`initializers.he_normal(seed=1)`),
# and Identity/Orthogonal under longer names.
globals().update({name: cls for name, cls in ALIASES.items()
                  if name not in ("uniform", "normal")})
IdentityInitializer, OrthogonalInitializer = Identity, Orthogonal

get = make_get("initializer", Initializer, ALIASES, CLASSES, allow_callable=True)


def serialize(initializer):
    return serialize_object(initializer, "keras.initializers")


def deserialize(config, custom_objects=None):
    """An initializer from its config, name or serialized dict (keras.initializers.deserialize);
    `custom_objects` maps names to user classes."""
    if custom_objects:
        from fkeras.saving.object_registration import custom_object_scope

        with custom_object_scope(custom_objects):
            return get(config)
    return get(config)


class STFT(Initializer):
    """Initializer of Short-Time Fourier Transform kernels (Keras 3's STFTInitializer).

    For a shape (T, 1, B) (window length T, B = F // 2 + 1 frequency bins of an F-point
    FFT), kernel[t, 0, k] = cos(-2 pi t k / F) (side "real") or sin(-2 pi t k / F) ("imag"),
    times the window, divided by sqrt(sum(window^2)) (scaling "density") or sum(|window|)
    ("spectrum"); a 1-D convolution with it computes the STFT (STFTSpectrogram).

    Args:
        side: "real" or "imag".
        window: a window name (hann, hamming, blackman, bartlett, boxcar: scipy's formulas),
            an array of length T, or None (no window, no scaling).
        scaling: "density", "spectrum" or None.
        periodic: periodic (True) or symmetric (False) window.
    """

    def __init__(self, side="real", window="hann", scaling="density", periodic=False):
        from fkeras.utils.windows import check_window_name

        if side not in ["real", "imag"]:
            raise ValueError(f"side should be 'real' or 'imag', not {side}")
        if isinstance(window, str):
            check_window_name(window)
        if scaling is not None and scaling not in ["density", "spectrum"]:
            raise ValueError("Scaling is invalid, it must be `None`, 'density' or 'spectrum'. "
                             f"Received scaling={scaling}")
        self.side, self.window, self.scaling, self.periodic = side, window, scaling, periodic

    def __call__(self, shape, dtype=None):
        from fkeras.utils.windows import get_window

        frame_length, _, bins = shape
        args = -2.0 * np.pi * np.arange(frame_length)[:, None, None] * \
            (np.arange(bins)[None, None, :] / ((bins - 1) * 2))
        kernel = np.cos(args) if self.side == "real" else np.sin(args)
        if self.window is not None:
            win = get_window(self.window, frame_length, self.periodic) \
                if isinstance(self.window, str) else np.asarray(self.window, np.float64)
            if win.ndim != 1 or win.shape[-1] != frame_length:
                raise ValueError("The shape of `window` must be equal to [frame_length]."
                                 f"Received: window shape={win.shape}")
            win = win.reshape(frame_length, 1, 1)
            scale = 1.0
            if self.scaling == "density":
                scale = np.sqrt(np.sum(win ** 2))
            elif self.scaling == "spectrum":
                scale = np.sum(np.abs(win))
            kernel = kernel * win / scale
        return kernel.astype(dtype or np.float32)

    def get_config(self):
        return {"side": self.side, "window": self.window, "periodic": self.periodic,
                "scaling": self.scaling}


STFTInitializer = stft = STFT
ALIASES["stft"] = STFT
CLASSES["STFT"] = STFT
CLASSES["STFTInitializer"] = STFT
