"""`.keras` files with ConvLSTM1D/2D/3D, SpectralNormalization, ReversibleEmbedding, adaptive
pooling, Pipeline, STFTSpectrogram and MelSpectrogram: fkeras round trips, files written by
real Keras 3 loaded by fkeras and files written by fkeras loaded by Keras 3 (skipped without
keras)."""

import importlib.util
import os

import numpy as np
import pytest

import fkeras

pytest.importorskip("h5py")


def conv_lstm(lib):
    L = lib.layers
    inp = lib.Input((3, 6, 6, 2), name="x")
    h = L.ConvLSTM2D(3, 2, padding="same", return_sequences=True, name="cl2")(inp)
    h = L.ConvLSTM2D(2, 3, go_backwards=True, name="cl2b")(h)
    return lib.Model(inp, L.Flatten()(h))


def conv_lstm_1d_3d(lib):
    L = lib.layers
    a, b = lib.Input((3, 8, 2), name="a"), lib.Input((2, 4, 4, 4, 1), name="b")
    ya = L.ConvLSTM1D(2, 3, strides=2, name="cl1")(a)
    yb = L.ConvLSTM3D(2, 2, name="cl3", return_state=True)(b)
    return lib.Model([a, b], [ya, yb[0], yb[2]])


def spectral(lib):
    L = lib.layers
    inp = lib.Input((6, 6, 2), name="x")
    h = L.SpectralNormalization(L.Conv2D(3, 2), power_iterations=2, name="sn_conv")(inp)
    h = L.AdaptiveAveragePooling2D((2, 3), name="aap")(h)
    h = L.AdaptiveMaxPooling2D(2, data_format="channels_first", name="amp")(h)
    h = L.Flatten()(h)
    return lib.Model(inp, L.SpectralNormalization(L.Dense(4), name="sn_dense")(h))


def reversible(lib):
    L = lib.layers
    inp = lib.Input((5,), dtype="int32", name="ids")
    emb = L.ReversibleEmbedding(11, 4, tie_weights=False, logit_soft_cap=3.0, name="emb")
    h = L.Pipeline([L.Dense(4, name="p1"), L.Dense(4, name="p2")], name="pipe")(emb(inp))
    return lib.Model(inp, emb(h, reverse=True))


def audio(lib):
    L = lib.layers
    a, b = lib.Input((200, 2), name="a"), lib.Input((1000,), name="b")
    ya = L.STFTSpectrogram(mode="magnitude", frame_length=32, frame_step=8, window=None,
                           name="stft")(a)
    yb = L.MelSpectrogram(fft_length=128, sequence_stride=32, num_mel_bins=12,
                          sampling_rate=4000, name="mel")(b)
    return lib.Model([a, b], [ya, yb])


def pools_1d_3d(lib):
    L = lib.layers
    a, b = lib.Input((9, 2), name="a"), lib.Input((5, 4, 6, 2), name="b")
    return lib.Model([a, b], [L.AdaptiveMaxPooling1D(4)(a), L.AdaptiveAveragePooling3D(2)(b)])


MODELS = {"conv_lstm": (conv_lstm, (2, 3, 6, 6, 2)),
          "conv_lstm_1d_3d": (conv_lstm_1d_3d, [(2, 3, 8, 2), (2, 2, 4, 4, 4, 1)]),
          "spectral": (spectral, (2, 6, 6, 2)), "reversible": (reversible, "ids"),
          "audio": (audio, [(2, 200, 2), (2, 1000)]),
          "pools_1d_3d": (pools_1d_3d, [(2, 9, 2), (2, 5, 4, 6, 2)])}


def _data(shape, seed):
    rng = np.random.default_rng(seed)
    if shape == "ids":
        return rng.integers(0, 11, (2, 5)).astype("int32")
    if isinstance(shape, list):
        return [rng.standard_normal(s).astype(np.float32) for s in shape]
    return rng.standard_normal(shape).astype(np.float32)


def _assert_close(got, want, rtol, atol):
    got = list(got) if isinstance(got, (list, tuple)) else [got]
    want = list(want) if isinstance(want, (list, tuple)) else [want]
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_fkeras_round_trip(tmp_path, name):
    build, shape = MODELS[name]
    model = build(fkeras)
    x = _data(shape, 0)
    model.save(tmp_path / "m.keras")
    loaded = fkeras.models.load_model(tmp_path / "m.keras")
    _assert_close(loaded.predict(x, verbose=0), model.predict(x, verbose=0), 1e-6, 1e-6)
    assert [type(layer).__name__ for layer in loaded.layers] == \
        [type(layer).__name__ for layer in model.layers]
    for a, b in zip(model.weights, loaded.weights):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _keras():
    if "KERAS_BACKEND" not in os.environ and importlib.util.find_spec("torch") is not None:
        os.environ["KERAS_BACKEND"] = "torch"
    return pytest.importorskip("keras")


@pytest.mark.parametrize("name", sorted(MODELS))
def test_keras_files_load_in_fkeras(tmp_path, name):
    keras = _keras()
    build, shape = MODELS[name]
    x = _data(shape, 2)
    model = build(keras)
    model.save(tmp_path / "k.keras")
    loaded = fkeras.models.load_model(tmp_path / "k.keras")
    _assert_close(loaded.predict(x, verbose=0), model.predict(x, verbose=0), 1e-4, 1e-4)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_fkeras_files_load_in_keras(tmp_path, name):
    keras = _keras()
    build, shape = MODELS[name]
    x = _data(shape, 3)
    model = build(fkeras)
    model.save(tmp_path / "f.keras")
    loaded = keras.models.load_model(tmp_path / "f.keras")
    _assert_close(loaded.predict(x, verbose=0), model.predict(x, verbose=0), 1e-4, 1e-4)
