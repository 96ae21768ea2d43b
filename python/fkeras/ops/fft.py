"""Fourier transforms (keras.ops.fft, fft2, ifft2, rfft, irfft, stft, istft).

fkeras tensors are real, so a complex value is a (real, imag) pair of tensors, as in Keras 3.
Every transform here is linear, so each backward is the adjoint transform applied to the
cotangent (written as `gr + i gi` for the real and imaginary output parts):
- fft over n points: F^H G = n * ifft(G); ifft: F G / n = fft(G) / n (per axis for fft2/ifft2);
- rfft: the adjoint of "keep bins 0..n/2" is n * Re(ifft(G zero-extended to n)); crop/pad of
  the input to fft_length becomes pad/crop of the gradient;
- irfft: bin k gets c_k / n * rfft(g)_k with c_k = 2 except the DC and Nyquist bins (1);
- stft: frames are x gathered at an index table (reflect padding and framing in one), so the
  backward is the rfft adjoint, times the window, scattered back with `bincount`;
- istft: overlap-add is a scatter into the output, so its adjoint gathers frames.
Windows follow Keras's torch backend: periodic `hann` / `hamming`, padded to fft_length
centred; istft divides by torch.istft's window envelope when sequence_length == fft_length,
center=True and a window is given, and by TensorFlow's stride-periodic envelope otherwise.
"""

import numpy as np

from fkeras.engine.keras_tensor import KerasTensor
from fkeras.ops import shape_utils as su
from fkeras.ops.registry import REGISTRY, Op, apply


def _complex_pair(x, name):
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        raise ValueError("Input `x` should be a tuple of two tensors - real and imaginary. "
                         f"Received: x={x}")
    real, imag = x
    if tuple(su.shape_of(real)) != tuple(su.shape_of(imag)):
        raise ValueError("Input `x` should be a tuple of two tensors - real and imaginary. "
                         "Both the real and imaginary parts should have the same shape. "
                         f"Received: x[0].shape = {tuple(su.shape_of(real))}, "
                         f"x[1].shape = {tuple(su.shape_of(imag))}")
    for part in (real, imag):
        dtype = getattr(part, "dtype", None)
        if dtype is None:
            dtype = np.asarray(part).dtype
        if not (dtype.kind == "f" if isinstance(dtype, np.dtype) else "float" in str(dtype)):
            raise ValueError(f"At least one tensor in input `x` of `{name}` is not of type "
                             f"float. Received: x={x}.")
    return real, imag


def _check_rank(shape, rank, name):
    if len(shape) < rank:
        raise ValueError(f"Input of `{name}` should have rank >= {rank}. "
                         f"Received: input.shape = {tuple(shape)}")


def _out(z, dtype):
    return np.ascontiguousarray(z.real, dtype=dtype), np.ascontiguousarray(z.imag, dtype=dtype)


class _ComplexOp(Op):
    """(real, imag) -> (real, imag), the same shape."""
    n_outputs = 2
    axes = (-1,)

    def output_spec(self, real, imag):
        _check_rank(su.shape_of(real), len(self.axes), self.name)
        dtype = getattr(real, "dtype", "float32")
        return [KerasTensor(su.shape_of(real), dtype), KerasTensor(su.shape_of(real), dtype)]

    def forward(self, dev, real, imag):
        _check_rank(real.shape, len(self.axes), self.name)
        z = self.transform(real.astype(np.float64) + 1j * imag.astype(np.float64))
        return _out(z, dev.dtype), None

    def backward(self, dev, saved, grads, needs):
        g = np.asarray(grads[0], np.float64) + 1j * np.asarray(grads[1], np.float64)
        dz = self.adjoint(g)
        return (np.ascontiguousarray(dz.real, dev.dtype) if needs[0] else None,
                np.ascontiguousarray(dz.imag, dev.dtype) if needs[1] else None)


def _count(g, axes):
    return float(np.prod([g.shape[a] for a in axes]))


class FFT(_ComplexOp):
    name = "fft"

    def transform(self, z):
        return np.fft.fft(z, axis=-1)

    def adjoint(self, g):
        return np.fft.ifft(g, axis=-1) * g.shape[-1]


class FFT2(_ComplexOp):
    name = "fft2"
    axes = (-2, -1)

    def transform(self, z):
        return np.fft.fft2(z, axes=(-2, -1))

    def adjoint(self, g):
        return np.fft.ifft2(g, axes=(-2, -1)) * _count(g, (-2, -1))


class IFFT2(_ComplexOp):
    name = "ifft2"
    axes = (-2, -1)

    def transform(self, z):
        return np.fft.ifft2(z, axes=(-2, -1))

    def adjoint(self, g):
        return np.fft.fft2(g, axes=(-2, -1)) / _count(g, (-2, -1))


def _fit_last(a, n):
    """Crops or zero-pads the last axis of `a` to n."""
    m = a.shape[-1]
    if m >= n:
        return a[..., :n]
    pad = [(0, 0)] * (a.ndim - 1) + [(0, n - m)]
    return np.pad(a, pad)


def _rfft_adjoint(g, n):
    """Gradient (length n, real) of x -> rfft(x, n) for a complex cotangent g (n//2+1 bins)."""
    full = np.zeros(g.shape[:-1] + (n,), np.complex128)
    full[..., :g.shape[-1]] = g
    return (np.fft.ifft(full, axis=-1) * n).real


def _irfft_adjoint(g, n, bins):
    """Gradient (complex, `bins` bins) of z -> irfft(z, n) for a real cotangent g (length n)."""
    dz = np.fft.rfft(g, n=n, axis=-1) / n
    dz[..., 1:(n + 1) // 2] *= 2.0
    return _fit_last(dz, bins)


class RFFT(Op):
    name = "rfft"
    n_outputs = 2

    def output_spec(self, x, fft_length=None):
        shape = su.shape_of(x)
        _check_rank(shape, 1, "rfft")
        n = fft_length if fft_length is not None else shape[-1]
        bins = None if n is None else n // 2 + 1
        dtype = getattr(x, "dtype", "float32")
        return [KerasTensor(shape[:-1] + (bins,), dtype), KerasTensor(shape[:-1] + (bins,), dtype)]

    def forward(self, dev, x, fft_length=None):
        _check_rank(x.shape, 1, "rfft")
        n = x.shape[-1] if fft_length is None else fft_length
        return _out(np.fft.rfft(x.astype(np.float64), n=n, axis=-1), dev.dtype), x.shape[-1]

    def backward(self, dev, length, grads, needs, fft_length=None):
        n = length if fft_length is None else fft_length
        g = np.asarray(grads[0], np.float64) + 1j * np.asarray(grads[1], np.float64)
        return (_fit_last(_rfft_adjoint(g, n), length).astype(dev.dtype),)


class IRFFT(Op):
    name = "irfft"

    def output_spec(self, real, imag, fft_length=None):
        shape = su.shape_of(real)
        _check_rank(shape, 1, "irfft")
        n = fft_length if fft_length is not None else (
            None if shape[-1] is None else 2 * (shape[-1] - 1))
        return KerasTensor(shape[:-1] + (n,), getattr(real, "dtype", "float32"))

    def forward(self, dev, real, imag, fft_length=None):
        _check_rank(real.shape, 1, "irfft")
        bins = real.shape[-1]
        n = 2 * (bins - 1) if fft_length is None else fft_length
        y = np.fft.irfft(real.astype(np.float64) + 1j * imag.astype(np.float64), n=n, axis=-1)
        return np.ascontiguousarray(y, dev.dtype), bins

    def backward(self, dev, bins, g, needs, fft_length=None):
        n = 2 * (bins - 1) if fft_length is None else fft_length
        dz = _irfft_adjoint(np.asarray(g, np.float64), n, bins)
        return (np.ascontiguousarray(dz.real, dev.dtype) if needs[0] else None,
                np.ascontiguousarray(dz.imag, dev.dtype) if needs[1] else None)


# ---- short-time transforms ----

def _window(window, sequence_length, fft_length):
    """Keras's torch-backend window (periodic), zero-padded to fft_length, centred; float64."""
    if window is None:
        win = np.ones(sequence_length)
    elif isinstance(window, str):
        if window not in ("hann", "hamming"):
            raise ValueError('If a string is passed to `window`, it must be one of `"hann"`, '
                             f'`"hamming"`. Received: window={window}')
        phase = np.cos(2.0 * np.pi * np.arange(sequence_length) / sequence_length)
        win = 0.5 - 0.5 * phase if window == "hann" else 0.54 - 0.46 * phase
    else:
        win = np.asarray(window, np.float64)
        if win.ndim != 1 or win.shape[-1] != sequence_length:
            raise ValueError("The shape of `window` must be equal to [sequence_length]."
                             f"Received: window shape={win.shape}")
    left = (fft_length - sequence_length) // 2
    return np.pad(win, (left, fft_length - sequence_length - left))


def _check_stft_args(sequence_length, sequence_stride, fft_length, name):
    if not isinstance(sequence_stride, (int, np.integer)) or sequence_stride <= 0:
        raise ValueError("`sequence_stride` must be a positive integer. "
                         f"Received: sequence_stride={sequence_stride}")
    if not isinstance(sequence_length, (int, np.integer)) or sequence_length <= 0:
        raise ValueError(f"`sequence_length` of `{name}` must be a positive integer. "
                         f"Received: sequence_length={sequence_length}")
    if not isinstance(fft_length, (int, np.integer)) or fft_length < sequence_length:
        raise ValueError("`fft_length` must equal or larger than `sequence_length`. "
                         f"Received: sequence_length={sequence_length}, "
                         f"fft_length={fft_length}")


def _num_frames(length, fft_length, stride, center):
    padded = length + (fft_length // 2) * 2 if center else length
    return 1 + (padded - fft_length) // stride


def _frame_index(length, fft_length, stride, center):
    """(frames, fft_length) indices into the unpadded signal (reflect padding folded in)."""
    pad = fft_length // 2 if center else 0
    if center and pad >= length:
        raise ValueError(f"`stft` with center=True pads the signal by {pad} on each side "
                         f"(reflect), which needs more than {pad} samples; received {length}.")
    frames = _num_frames(length, fft_length, stride, center)
    if frames < 1:
        raise ValueError(f"`stft` needs at least fft_length={fft_length} samples with "
                         f"center=False; received {length}.")
    pos = np.arange(frames)[:, None] * stride + np.arange(fft_length)[None, :] - pad
    pos = np.abs(pos)  # reflect on the left
    return np.where(pos >= length, 2 * (length - 1) - pos, pos)


class STFT(Op):
    name = "stft"
    n_outputs = 2

    def output_spec(self, x, sequence_length, sequence_stride, fft_length, window="hann",
                    center=True):
        shape = su.shape_of(x)
        _check_rank(shape, 1, "stft")
        frames = None if shape[-1] is None else _num_frames(shape[-1], fft_length,
                                                            sequence_stride, center)
        out = shape[:-1] + (frames, fft_length // 2 + 1)
        dtype = getattr(x, "dtype", "float32")
        return [KerasTensor(out, dtype), KerasTensor(out, dtype)]

    def forward(self, dev, x, sequence_length, sequence_stride, fft_length, window="hann",
                center=True):
        _check_rank(x.shape, 1, "stft")
        win = _window(window, sequence_length, fft_length)
        index = _frame_index(x.shape[-1], fft_length, sequence_stride, center)
        frames = x.astype(np.float64)[..., index] * win
        return _out(np.fft.rfft(frames, axis=-1), dev.dtype), (x.shape, index, win)

    def backward(self, dev, saved, grads, needs, **attrs):
        shape, index, win = saved
        g = np.asarray(grads[0], np.float64) + 1j * np.asarray(grads[1], np.float64)
        dframes = _rfft_adjoint(g, index.shape[-1]) * win
        lead = int(np.prod(shape[:-1]))
        flat = dframes.reshape(lead, -1)
        dx = np.stack([np.bincount(index.ravel(), row, minlength=shape[-1]) for row in flat])
        return (dx.reshape(shape).astype(dev.dtype),)


def _istft_plan(frames, sequence_length, sequence_stride, fft_length, length, window, center):
    """The window applied to each frame, the per-sample scale after overlap-add, the full
    overlap-add length and the (start, end) slice kept."""
    win = None if window is None else _window(window, sequence_length, fft_length)
    full = fft_length + sequence_stride * (frames - 1)
    scale = np.ones(full)
    torch_path = win is not None and sequence_length == fft_length and center
    if win is None:
        win = np.ones(fft_length)
    elif sequence_length == fft_length and center:
        # torch.istft: divide by the overlap-added squared window at each sample.
        envelope = np.zeros(full)
        for t in range(frames):
            envelope[t * sequence_stride:t * sequence_stride + fft_length] += win ** 2
        scale = 1.0 / np.where(envelope > 1e-11, envelope, 1.0)
    else:
        # TensorFlow's inverse_stft_window_fn: the squared window summed modulo the stride.
        periods = -(-fft_length // sequence_stride)
        sq = np.pad(win ** 2, (0, periods * sequence_stride - fft_length))
        denom = np.tile(sq.reshape(periods, sequence_stride).sum(0), periods)[:fft_length]
        win = win / denom
    start = fft_length // 2 if center else 0
    if length is not None:
        # torch.istft zero-pads a short signal to `length`; Keras's own overlap-add path
        # (every other configuration) just slices, as Keras's torch backend does.
        end = start + length if torch_path else min(start + length, full)
    elif center:
        end = full - fft_length // 2
    else:
        end = full
    return win, scale, full, start, end


class ISTFT(Op):
    name = "istft"

    def output_spec(self, real, imag, sequence_length, sequence_stride, fft_length, length=None,
                    window="hann", center=True):
        shape = su.shape_of(real)
        _check_rank(shape, 2, "istft")
        if length is not None:
            size = length
        elif shape[-2] is None:
            size = None
        else:
            size = (shape[-2] - 1) * sequence_stride + fft_length
            if center:
                size -= (fft_length // 2) * 2
        return KerasTensor(shape[:-2] + (size,), getattr(real, "dtype", "float32"))

    def forward(self, dev, real, imag, sequence_length, sequence_stride, fft_length, length=None,
                window="hann", center=True):
        _check_rank(real.shape, 2, "istft")
        frames = real.shape[-2]
        win, scale, full, start, end = _istft_plan(frames, sequence_length, sequence_stride,
                                                   fft_length, length, window, center)
        z = real.astype(np.float64) + 1j * imag.astype(np.float64)
        seq = np.fft.irfft(z, n=fft_length, axis=-1) * win
        index = np.arange(frames)[:, None] * sequence_stride + np.arange(fft_length)[None, :]
        lead = real.shape[:-2]
        flat = seq.reshape(-1, frames * fft_length)
        y = np.stack([np.bincount(index.ravel(), row, minlength=full) for row in flat]) * scale
        y = _slice_padded(y, start, end).reshape(lead + (-1,))
        return np.ascontiguousarray(y, dev.dtype), (real.shape, win, scale, index, start, end)

    def backward(self, dev, saved, g, needs, fft_length=None, **attrs):
        shape, win, scale, index, start, end = saved
        full = scale.shape[0]
        g = np.asarray(g, np.float64).reshape(-1, end - start)
        dy = np.zeros((g.shape[0], max(full, end)))
        dy[:, start:end] = g
        dy = dy[:, :full] * scale
        dseq = dy[:, index] * win  # (lead, frames, fft_length)
        dz = _irfft_adjoint(dseq, fft_length, shape[-1]).reshape(shape)
        return (np.ascontiguousarray(dz.real, dev.dtype) if needs[0] else None,
                np.ascontiguousarray(dz.imag, dev.dtype) if needs[1] else None)


def _slice_padded(y, start, end):
    """y[:, start:end], zero-padded on the right when end runs past the signal (torch.istft)."""
    if end > y.shape[-1]:
        y = np.pad(y, [(0, 0), (0, end - y.shape[-1])])
    return y[:, start:end]


# ---- public functions ----

def _pair(outputs):
    return tuple(outputs)


def fft(x):
    """Computes the Fast Fourier Transform along the last axis of the input.

    Args:
        x: tuple of the real and imaginary parts of the input tensor, both floating.

    Returns:
        A tuple (real, imag) of the output tensor's parts.

    Example:
    >>> fft((np.array([1., 2.]), np.array([0., 1.])))
    (array([ 3., -1.]), array([ 1., -1.]))
    """
    return _pair(apply(REGISTRY["fft"], *_complex_pair(x, "fft")))


def fft2(x):
    """Computes the 2D Fast Fourier Transform along the last two axes of the input.

    Args:
        x: tuple of the real and imaginary parts of the input tensor, both floating.

    Returns:
        A tuple (real, imag) of the output tensor's parts.
    """
    return _pair(apply(REGISTRY["fft2"], *_complex_pair(x, "fft2")))


def ifft2(x):
    """Computes the 2D inverse Fast Fourier Transform along the last two axes of the input.

    Args:
        x: tuple of the real and imaginary parts of the input tensor, both floating.

    Returns:
        A tuple (real, imag) of the output tensor's parts.
    """
    return _pair(apply(REGISTRY["ifft2"], *_complex_pair(x, "ifft2")))


def rfft(x, fft_length=None):
    """Real-valued Fast Fourier Transform along the last axis of the input.

    Returns the `fft_length // 2 + 1` unique bins. The last axis is cropped or zero-padded
    to `fft_length` first (default: its own length).

    Args:
        x: real input tensor.
        fft_length: int, the FFT length.

    Returns:
        A tuple (real, imag) of the output tensor's parts.
    """
    if fft_length is not None and (not isinstance(fft_length, (int, np.integer))
                                   or fft_length <= 0):
        raise ValueError(f"`fft_length` of `rfft` must be a positive integer. "
                         f"Received: fft_length={fft_length}")
    return _pair(apply(REGISTRY["rfft"], x, fft_length=fft_length))


def irfft(x, fft_length=None):
    """Inverse real-valued Fast Fourier Transform along the last axis.

    The last axis holds the `fft_length // 2 + 1` bins of a real signal's transform; when
    `fft_length` is None it is `2 * (bins - 1)` (pass it for an odd length).

    Args:
        x: tuple of the real and imaginary parts of the input tensor, both floating.
        fft_length: int, the length of the output signal.

    Returns:
        The real output tensor (last axis `fft_length`).
    """
    if fft_length is not None and (not isinstance(fft_length, (int, np.integer))
                                   or fft_length <= 0):
        raise ValueError(f"`fft_length` of `irfft` must be a positive integer. "
                         f"Received: fft_length={fft_length}")
    return apply(REGISTRY["irfft"], *_complex_pair(x, "irfft"), fft_length=fft_length)


def _window_attr(window):
    if window is None or isinstance(window, str):
        return window
    return tuple(float(w) for w in np.asarray(window, np.float64).ravel()) \
        if np.ndim(window) == 1 else np.asarray(window)


def stft(x, sequence_length, sequence_stride, fft_length, window="hann", center=True):
    """Short-Time Fourier Transform along the last axis of the input.

    Args:
        x: real input tensor (..., samples).
        sequence_length: int, the window length.
        sequence_stride: int, the hop size.
        fft_length: int (>= sequence_length), the FFT size of each frame.
        window: `"hann"`, `"hamming"` (periodic), a tensor of length `sequence_length`, or
            None (no windowing).
        center: pad the signal by `fft_length // 2` on both sides (reflect) so that frame t
            is centred at `t * sequence_stride`.

    Returns:
        A tuple (real, imag), each (..., frames, fft_length // 2 + 1).

    Example:
    >>> stft(np.array([0., 1., 2., 3., 4.]), 3, 2, 3)[0]
    array([[0.75, -0.375], [3.75, -1.875], [5.25, -2.625]])
    """
    _check_stft_args(sequence_length, sequence_stride, fft_length, "stft")
    dtype = getattr(x, "dtype", None)
    if dtype is not None and str(dtype) not in ("float32", "float64") and not isinstance(
            x, KerasTensor):
        raise TypeError("Invalid input type. Expected `float32` or `float64`. "
                        f"Received: input type={dtype}")
    window = _window_attr(window)
    _window(window, sequence_length, fft_length)
    return _pair(apply(REGISTRY["stft"], x, sequence_length=sequence_length,
                       sequence_stride=sequence_stride, fft_length=fft_length, window=window,
                       center=center))


def istft(x, sequence_length, sequence_stride, fft_length, length=None, window="hann",
          center=True):
    """Inverse Short-Time Fourier Transform along the last two axes of the input.

    Use the arguments given to `stft` to reconstruct the signal.

    Args:
        x: tuple of the real and imaginary parts, each (..., frames, fft_length // 2 + 1).
        sequence_length: int, the window length.
        sequence_stride: int, the hop size.
        fft_length: int, the FFT size that produced `x`.
        length: int or None; the output is cropped (or zero-padded) to exactly this length.
        window: as in `stft`.
        center: whether `x` came from a centred `stft`.

    Returns:
        The real signal (..., samples).
    """
    _check_stft_args(sequence_length, sequence_stride, fft_length, "istft")
    window = _window_attr(window)
    _window(window, sequence_length, fft_length)
    return apply(REGISTRY["istft"], *_complex_pair(x, "istft"),
                 sequence_length=sequence_length, sequence_stride=sequence_stride,
                 fft_length=fft_length, length=length, window=window, center=center)
