"""MelSpectrogram, STFTSpectrogram and the STFT initializer: NumPy float64 references, real
Keras 3 (torch backend), gradients, configs and error texts."""

import numpy as np
import pytest

import fkeras
from fkeras import initializers, layers
from fkeras.utils.windows import get_window
from layer_testing import run_layer_test

R = np.random.default_rng(0)
SIG = R.standard_normal((2, 300, 2)).astype("float32")
WIN = np.linspace(0.1, 1.0, 64).astype("float32")


def _keras():
    return pytest.importorskip("keras")


# ---- the initializer and windows ----

@pytest.mark.parametrize("name,ref", [("hann", np.hanning), ("hamming", np.hamming),
                                      ("blackman", np.blackman), ("bartlett", np.bartlett)])
def test_windows_match_numpy(name, ref):
    np.testing.assert_allclose(get_window(name, 11), ref(11), atol=1e-15)
    np.testing.assert_allclose(get_window(name, 10, periodic=True), ref(11)[:10], atol=1e-15)


@pytest.mark.parametrize("side", ["real", "imag"])
@pytest.mark.parametrize("scaling", ["density", "spectrum", None])
def test_stft_initializer_reference(side, scaling):
    kernel = initializers.STFT(side, "hann", scaling, periodic=True)((16, 1, 9), "float64")
    t, k = np.arange(16)[:, None], np.arange(9)[None, :]
    wave = np.cos(-2 * np.pi * t * k / 16) if side == "real" else np.sin(-2 * np.pi * t * k / 16)
    win = np.hanning(17)[:16][:, None]
    scale = {"density": np.sqrt(np.sum(win ** 2)), "spectrum": np.sum(win), None: 1.0}[scaling]
    np.testing.assert_allclose(kernel[:, 0, :], wave * win / scale, atol=1e-12)


def test_stft_initializer_names_and_errors():
    assert initializers.STFTInitializer is initializers.STFT is initializers.stft
    assert isinstance(initializers.get("stft"), initializers.STFT)
    init = initializers.get({"class_name": "STFTInitializer", "config": {"side": "imag"}})
    assert init.side == "imag"
    assert initializers.serialize(initializers.STFT("imag", None))["config"] == \
        {"side": "imag", "window": None, "periodic": False, "scaling": "density"}
    for kwargs, text in [({"side": "both"}, "side should be"),
                         ({"window": "foo"}, "Unknown window"),
                         ({"scaling": "energy"}, "Scaling is invalid")]:
        with pytest.raises(ValueError, match=text):
            initializers.STFT(**kwargs)
    with pytest.raises(ValueError, match="shape of `window`"):
        initializers.STFT(window=np.ones(3))((8, 1, 5))


@pytest.mark.parametrize("window", ["array", None])
@pytest.mark.parametrize("scaling", ["density", "spectrum"])
def test_stft_initializer_matches_keras(window, scaling):
    keras = _keras()
    win = np.linspace(0.2, 1, 12) if window == "array" else None
    for side in ("real", "imag"):
        ours = initializers.STFT(side, win, scaling)((12, 1, 9))
        theirs = keras.ops.convert_to_numpy(keras.initializers.STFT(side, win, scaling)((12, 1, 9)))
        np.testing.assert_allclose(ours, theirs, atol=1e-5)


# ---- STFTSpectrogram ----

def _np_spectrogram(x, frame_length, step, fft_length, win):
    """(batch, frames, channels * bins) complex STFT of each channel, 'valid' framing."""
    frames = 1 + (x.shape[1] - frame_length) // step
    out = []
    for c in range(x.shape[2]):
        seq = np.stack([x[:, t * step:t * step + frame_length, c] * win for t in range(frames)], 1)
        out.append(np.fft.rfft(seq, n=fft_length, axis=-1) / np.sqrt(np.sum(win ** 2)))
    return np.concatenate(out, axis=-1)


@pytest.mark.parametrize("mode", ["magnitude", "log", "real", "imag", "psd", "stft"])
def test_stft_spectrogram_vs_numpy_fft(mode):
    layer = layers.STFTSpectrogram(mode=mode, frame_length=64, frame_step=16, window=WIN)
    x = SIG.astype(np.float64)
    with fkeras.device("reference"):
        got = np.asarray(layer(x))
    z = _np_spectrogram(x, 64, 16, 64, WIN.astype(np.float64))
    want = {"magnitude": np.abs(z), "log": np.log(np.abs(z)), "real": z.real, "imag": z.imag,
            "stft": None, "psd": None}[mode]
    if mode == "stft":
        bins = 33
        want = np.concatenate([np.concatenate([z.real[..., c * bins:(c + 1) * bins],
                                               z.imag[..., c * bins:(c + 1) * bins]], -1)
                               for c in range(2)], -1)
    if mode == "psd":
        p = np.abs(z) ** 2
        want = p.copy()
        for c in range(2):
            want[..., c * 33 + 1:(c + 1) * 33 - 1] *= 2
    np.testing.assert_allclose(got, want, atol=1e-6, rtol=1e-5)  # float32 kernels


CASES = {
    "log": dict(frame_length=64, frame_step=16, window=WIN),
    "magnitude_same_expand": dict(mode="magnitude", frame_length=50, window=None,
                                  padding="same", expand_dims=True, scaling="spectrum"),
    "psd_channels_first": dict(mode="psd", frame_length=64, frame_step=32, fft_length=128,
                               window=WIN, data_format="channels_first"),
    "angle": dict(mode="angle", frame_length=64, frame_step=16, window=WIN),
    "stft_expand_cf": dict(mode="stft", frame_length=64, frame_step=20, window=WIN,
                           data_format="channels_first", expand_dims=True),
    "real": dict(mode="real", frame_length=32, window=None, scaling=None),
    "imag": dict(mode="imag", frame_length=32, frame_step=8, window=None),
}


def _input(kwargs):
    return np.swapaxes(SIG, 1, 2).copy() if kwargs.get("data_format") == "channels_first" \
        else SIG


@pytest.mark.parametrize("name", sorted(CASES))
def test_stft_spectrogram_catalogue(name):
    kwargs = CASES[name]
    x = _input(kwargs)
    layer = layers.STFTSpectrogram(**kwargs)
    expected = layer.compute_output_shape(x.shape)
    n_weights = 1 if kwargs.get("mode") in ("real", "imag") else 2
    run_layer_test(layers.STFTSpectrogram, kwargs, input_data=x,
                   expected_output_shape=expected, expected_num_trainable_weights=n_weights,
                   run_training_check=kwargs.get("mode") != "angle")


@pytest.mark.parametrize("name", sorted(CASES))
def test_stft_spectrogram_matches_keras(name):
    keras = _keras()
    kwargs = CASES[name]
    x = _input(kwargs)
    f, k = layers.STFTSpectrogram(**kwargs), keras.layers.STFTSpectrogram(**kwargs)
    got, want = np.asarray(f(x)), keras.ops.convert_to_numpy(k(x))
    assert got.shape == want.shape == tuple(k.compute_output_shape(x.shape)) == \
        tuple(f.compute_output_shape(x.shape))
    if kwargs.get("mode") == "angle":  # equal modulo 2 pi (the branch cut at imag = 0)
        got, want = np.exp(1j * got), np.exp(1j * want)
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4)
    assert [w.name for w in f.weights] == [w.name for w in k.weights]
    cf, ck = f.get_config(), k.get_config()
    assert list(cf) == list(ck)
    assert {a: v for a, v in cf.items() if a not in ("name", "dtype", "window")} == \
        {a: v for a, v in ck.items() if a not in ("name", "dtype", "window")}


STFT_ERRORS = [
    (dict(frame_length=16, frame_step=20), ValueError, "`frame_step` should be"),
    (dict(frame_length=16, fft_length=8), ValueError, "`fft_length` should be not less"),
    (dict(mode="power"), ValueError, "Output mode is invalid"),
    (dict(scaling="x"), ValueError, "Scaling is invalid"),
    (dict(padding="causal"), ValueError, "Padding is invalid"),
    (dict(window="nope"), ValueError, "Unknown window"),
]


@pytest.mark.parametrize("i", range(len(STFT_ERRORS)))
def test_stft_spectrogram_errors(i):
    kwargs, exc, text = STFT_ERRORS[i]
    with pytest.raises(exc, match=text):
        layers.STFTSpectrogram(**kwargs)


def test_stft_spectrogram_warns_on_odd_fft_length():
    with pytest.warns(UserWarning, match="power of two"):
        layers.STFTSpectrogram(frame_length=16, fft_length=24)


# ---- MelSpectrogram ----

def _np_mel(x, fft, stride, bins, rate, fmin, fmax):
    pad = np.pad(x, [(0, 0), (fft // 2, fft // 2)], mode="reflect")
    frames = 1 + (pad.shape[1] - fft) // stride
    win = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(fft) / fft)
    seq = np.stack([pad[:, t * stride:t * stride + fft] * win for t in range(frames)], 1)
    power = np.abs(np.fft.rfft(seq, axis=-1)) ** 2

    def mel(f):
        return 1127.0 * np.log(1 + f / 700.0)

    freqs = mel(np.linspace(0, rate / 2, fft // 2 + 1))
    edges = np.linspace(mel(fmin), mel(fmax), bins + 2)
    weights = np.zeros((fft // 2 + 1, bins))
    for m in range(bins):
        lo, c, hi = edges[m:m + 3]
        weights[1:, m] = np.maximum(0, np.minimum((freqs[1:] - lo) / (c - lo),
                                                  (hi - freqs[1:]) / (hi - c)))
    db = 10 * np.log10(np.maximum(power @ weights, 1e-10))
    db = np.maximum(db, db.max() - 80.0)
    return np.swapaxes(db, -1, -2)


def test_mel_spectrogram_vs_numpy_float64():
    x = R.standard_normal((2, 2000))
    layer = layers.MelSpectrogram(fft_length=256, sequence_stride=64, num_mel_bins=20,
                                  sampling_rate=8000, min_freq=50.0, max_freq=3500.0)
    with fkeras.device("reference"):
        got = np.asarray(layer(x))
    np.testing.assert_allclose(got, _np_mel(x, 256, 64, 20, 8000, 50.0, 3500.0), atol=1e-8)


MEL_CASES = {
    "db": dict(num_mel_bins=32, sampling_rate=8000, sequence_stride=128, fft_length=512),
    "power_hamming_short_window": dict(num_mel_bins=16, sampling_rate=8000, sequence_stride=100,
                                       fft_length=256, sequence_length=200, window="hamming",
                                       power_to_db=False, mag_exp=1.0),
    "top_db_ref": dict(num_mel_bins=20, fft_length=256, sequence_stride=64, top_db=20.0,
                       ref_power=2.0, min_freq=100.0, max_freq=3000.0),
}


@pytest.mark.parametrize("name", sorted(MEL_CASES))
def test_mel_spectrogram_matches_keras(name):
    keras = _keras()
    kwargs = MEL_CASES[name]
    x = R.standard_normal((2, 4000)).astype("float32")
    f, k = layers.MelSpectrogram(**kwargs), keras.layers.MelSpectrogram(**kwargs)
    got, want = np.asarray(f(x)), keras.ops.convert_to_numpy(k(x))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
    assert tuple(f.compute_output_shape(x.shape)) == tuple(k.compute_output_shape(x.shape))
    cf, ck = f.get_config(), k.get_config()
    assert list(cf) == list(ck)
    assert {a: v for a, v in cf.items() if a not in ("name", "dtype")} == \
        {a: v for a, v in ck.items() if a not in ("name", "dtype")}


def test_mel_spectrogram_gradient_vs_finite_differences():
    layer = layers.MelSpectrogram(fft_length=64, sequence_stride=16, num_mel_bins=8,
                                  sampling_rate=4000, power_to_db=False)
    rng = np.random.default_rng(5)
    with fkeras.device("reference"):
        x = rng.standard_normal((2, 200))
        with fkeras.GradientTape() as tape:
            tape.watch(x)
            y = layer(x)
        cot = rng.standard_normal(np.shape(y))
        g = np.asarray(tape.gradient(y, x, output_gradients=cot))
        v = rng.standard_normal(x.shape)
        eps = 1e-6
        numeric = (np.sum(cot * np.asarray(layer(x + eps * v)))
                   - np.sum(cot * np.asarray(layer(x - eps * v)))) / (2 * eps)
    np.testing.assert_allclose(np.sum(g * v), numeric, rtol=1e-6)


def test_mel_spectrogram_errors_and_config():
    with pytest.raises(ValueError, match="`fft_length` must be greater than or equal"):
        layers.MelSpectrogram(fft_length=256, sequence_length=512)
    layer = layers.MelSpectrogram(sampling_rate=22050)
    assert layer.max_freq == 11025 and layer.sequence_length == 2048
    back = layers.MelSpectrogram.from_config(layer.get_config())
    assert back.get_config() == layer.get_config()
