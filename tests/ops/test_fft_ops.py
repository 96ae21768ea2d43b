"""The Fourier ops (fft, fft2, ifft2, rfft, irfft, stft, istft): values vs numpy.fft in float64
and real Keras 3 (torch backend), backward vs central differences with a random cotangent,
symbolic shapes vs eager, and error texts."""

import numpy as np
import pytest

import fkeras
from fkeras import ops
from op_testing import fd_check

R = np.random.default_rng(7)
A = R.standard_normal((2, 3, 8))
B = R.standard_normal((2, 3, 8))
SIG = R.standard_normal((2, 40))


def _hann(n):
    return 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)


def _np_stft(x, sl, ss, fl, center):
    """Straightforward float64 reference: reflect pad, frame, periodic Hann, rfft."""
    if center:
        x = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(fl // 2, fl // 2)], mode="reflect")
    left = (fl - sl) // 2
    win = np.pad(_hann(sl), (left, fl - sl - left))
    frames = 1 + (x.shape[-1] - fl) // ss
    seq = np.stack([x[..., t * ss:t * ss + fl] * win for t in range(frames)], axis=-2)
    return np.fft.rfft(seq, axis=-1)


# name: (fkeras call, float64 reference as a complex or real array)
CASES = {
    "fft": (lambda: ops.fft((A, B)), lambda: np.fft.fft(A + 1j * B)),
    "fft2": (lambda: ops.fft2((A, B)), lambda: np.fft.fft2(A + 1j * B)),
    "ifft2": (lambda: ops.ifft2((A, B)), lambda: np.fft.ifft2(A + 1j * B)),
    "rfft": (lambda: ops.rfft(A), lambda: np.fft.rfft(A)),
    "rfft_crop": (lambda: ops.rfft(A, 5), lambda: np.fft.rfft(A, 5)),
    "rfft_pad": (lambda: ops.rfft(A, 13), lambda: np.fft.rfft(A, 13)),
    "irfft": (lambda: ops.irfft((A, B)), lambda: np.fft.irfft(A + 1j * B)),
    "irfft_odd": (lambda: ops.irfft((A, B), 15), lambda: np.fft.irfft(A + 1j * B, 15)),
    "irfft_crop": (lambda: ops.irfft((A, B), 6), lambda: np.fft.irfft(A + 1j * B, 6)),
    "stft": (lambda: ops.stft(SIG, 16, 4, 16), lambda: _np_stft(SIG, 16, 4, 16, True)),
    "stft_short_window": (lambda: ops.stft(SIG, 10, 3, 16, center=False),
                          lambda: _np_stft(SIG, 10, 3, 16, False)),
    "istft_roundtrip": (lambda: ops.istft(ops.stft(SIG, 16, 4, 16), 16, 4, 16), lambda: SIG),
    # Keras's stride-periodic window envelope inverts exactly away from the edges.
    "istft_roundtrip_tf_path": (lambda: ops.istft(ops.stft(SIG, 12, 4, 16), 12, 4, 16)[:, 8:-8],
                                lambda: SIG[:, 8:-8]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_vs_numpy_float64(name):
    call, ref = CASES[name]
    with fkeras.device("reference"):
        out = call()
    expected = ref()
    if isinstance(out, tuple):
        assert len(out) == 2
        got = np.asarray(out[0]) + 1j * np.asarray(out[1])
    else:
        got = np.asarray(out)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, atol=1e-9, rtol=1e-9)


@pytest.mark.parametrize("name", sorted(CASES))
def test_cpu_device_float32(name):
    call, ref = CASES[name]
    out = call()
    parts = out if isinstance(out, tuple) else (out,)
    assert all(np.asarray(p).dtype == np.float32 for p in parts)
    got = np.asarray(parts[0]) + (1j * np.asarray(parts[1]) if len(parts) == 2 else 0)
    np.testing.assert_allclose(got, ref(), atol=2e-5, rtol=1e-4)


KERAS_CASES = {
    "fft": (lambda o: o.fft((A32, B32)),),
    "fft2": (lambda o: o.fft2((A32, B32)),),
    "ifft2": (lambda o: o.ifft2((A32, B32)),),
    "rfft": (lambda o: o.rfft(A32, 12),),
    "irfft": (lambda o: o.irfft((A32, B32), 11),),
    "stft_hann": (lambda o: o.stft(S32, 16, 4, 16),),
    "stft_hamming_pad": (lambda o: o.stft(S32, 10, 4, 16, "hamming"),),
    "stft_none_nocenter": (lambda o: o.stft(S32, 16, 5, 16, None, False),),
    "stft_array_window": (lambda o: o.stft(S32, 8, 2, 8, WIN8),),
    "istft_torch_path": (lambda o: o.istft((F1, F2), 16, 4, 16),),
    "istft_torch_path_length": (lambda o: o.istft((F1, F2), 16, 4, 16, 50),),
    "istft_tf_path": (lambda o: o.istft((F1, F2), 12, 4, 16, None, "hann", True),),
    "istft_tf_path_nocenter": (lambda o: o.istft((F1, F2), 16, 4, 16, 30, "hamming", False),),
    "istft_no_window": (lambda o: o.istft((F1, F2), 16, 4, 16, None, None),),
}
A32, B32, S32 = A.astype("float32"), B.astype("float32"), SIG.astype("float32")
F1 = R.standard_normal((2, 11, 9)).astype("float32")
F2 = R.standard_normal((2, 11, 9)).astype("float32")
WIN8 = np.linspace(0.1, 1, 8).astype("float32")


@pytest.mark.parametrize("name", sorted(KERAS_CASES))
def test_matches_keras(name):
    keras = pytest.importorskip("keras")
    (call,) = KERAS_CASES[name]
    ours, theirs = call(ops), call(keras.ops)
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        t = keras.ops.convert_to_numpy(t)
        assert np.shape(o) == t.shape
        np.testing.assert_allclose(np.asarray(o), t, atol=2e-5, rtol=1e-4)


# name: (function of float64 inputs, inputs, positions differentiated)
GRAD_CASES = {
    "fft": (lambda a, b: ops.fft((a, b)), (A, B), (0, 1)),
    "fft2": (lambda a, b: ops.fft2((a, b)), (A, B), (0, 1)),
    "ifft2": (lambda a, b: ops.ifft2((a, b)), (A, B), (0, 1)),
    "rfft": (lambda a: ops.rfft(a), (A,), (0,)),
    "rfft_odd": (lambda a: ops.rfft(a), (A[..., :7],), (0,)),
    "rfft_crop": (lambda a: ops.rfft(a, 5), (A,), (0,)),
    "rfft_pad": (lambda a: ops.rfft(a, 12), (A,), (0,)),
    "irfft": (lambda a, b: ops.irfft((a, b)), (A, B), (0, 1)),
    "irfft_odd": (lambda a, b: ops.irfft((a, b), 15), (A, B), (0, 1)),
    "irfft_crop": (lambda a, b: ops.irfft((a, b), 6), (A, B), (0, 1)),
    "irfft_pad": (lambda a, b: ops.irfft((a, b), 20), (A, B), (0, 1)),
    "stft": (lambda x: ops.stft(x, 16, 4, 16), (SIG,), (0,)),
    "stft_short_window": (lambda x: ops.stft(x, 10, 3, 16, "hamming", False), (SIG,), (0,)),
    "istft_torch_path": (lambda a, b: ops.istft((a, b), 16, 4, 16), (F1, F2), (0, 1)),
    "istft_tf_path": (lambda a, b: ops.istft((a, b), 12, 4, 16, 30), (F1, F2), (0, 1)),
    "istft_padded_length": (lambda a, b: ops.istft((a, b), 16, 4, 16, 50), (F1, F2), (0, 1)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_backward_vs_finite_differences(name):
    fn, inputs, wrt = GRAD_CASES[name]
    fd_check(fn, [np.asarray(x, np.float64) for x in inputs], wrt, np.random.default_rng(3))


SYMBOLIC = {
    "fft": lambda x: ops.fft((x, x)),
    "fft2": lambda x: ops.fft2((x, x)),
    "ifft2": lambda x: ops.ifft2((x, x)),
    "rfft": lambda x: ops.rfft(x, 6),
    "irfft": lambda x: ops.irfft((x, x)),
    "irfft_len": lambda x: ops.irfft((x, x), 9),
    "stft": lambda x: ops.stft(x, 4, 3, 6),
    "stft_nocenter": lambda x: ops.stft(x, 4, 3, 6, center=False),
    "istft": lambda x: ops.istft((x, x), 4, 2, 8),
    "istft_len": lambda x: ops.istft((x, x), 4, 2, 8, length=11),
}


@pytest.mark.parametrize("name", sorted(SYMBOLIC))
def test_symbolic_shape_equals_eager(name):
    fn = SYMBOLIC[name]
    x = np.ones((2, 7, 10), np.float32) if not name.startswith("istft") else \
        np.ones((2, 7, 5), np.float32)
    eager = fn(x)
    sym = fn(fkeras.KerasTensor(x.shape))
    eager = eager if isinstance(eager, tuple) else (eager,)
    sym = sym if isinstance(sym, (tuple, list)) else (sym,)
    assert [tuple(s.shape) for s in sym] == [np.shape(e) for e in eager]


ERRORS = [
    (lambda: ops.fft(A), ValueError, "tuple of two tensors"),
    (lambda: ops.fft((A, B[..., :4])), ValueError, "same shape"),
    (lambda: ops.fft2((np.ones(3, np.int32), np.ones(3, np.int32))), ValueError,
     "not of type float"),
    (lambda: ops.rfft(A, 0), ValueError, "fft_length"),
    (lambda: ops.stft(SIG, 16, 0, 16), ValueError, "`sequence_stride` must be a positive integer"),
    (lambda: ops.stft(SIG, 16, 4, 8), ValueError, "`fft_length` must equal or larger"),
    (lambda: ops.stft(SIG, 16, 4, 16, "blackman"), ValueError, '"hann"'),
    (lambda: ops.stft(SIG, 16, 4, 16, np.ones(5)), ValueError, "shape of `window`"),
    (lambda: ops.stft(SIG.astype(np.int32), 16, 4, 16), TypeError, "Expected `float32`"),
    (lambda: ops.stft(SIG[:, :5], 16, 4, 16), ValueError, "reflect"),
    (lambda: ops.istft((F1, F2), 16, -1, 16), ValueError, "sequence_stride"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    fn, exc, text = ERRORS[i]
    with pytest.raises(exc, match=text):
        fn()


def test_ops_in_a_functional_model():
    inp = fkeras.Input((40,))
    re, im = ops.stft(inp, 16, 4, 16)
    out = ops.sqrt(re * re + im * im)
    model = fkeras.Model(inp, out)
    got = model.predict(SIG.astype("float32"), verbose=0)
    np.testing.assert_allclose(got, np.abs(_np_stft(SIG, 16, 4, 16, True)), atol=1e-4)
