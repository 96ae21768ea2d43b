"""audio_dataset_from_directory on WAV files written here with the stdlib `wave` module."""

import os
import wave

import numpy as np
import pytest

import fkeras
from fkeras.utils.audio_dataset import read_wav


def _write_wav(path, samples, rate=8000, width=2):
    """`samples` (n, channels) floats in [-1, 1) -> integer PCM of `width` bytes."""
    samples = np.asarray(samples, np.float64)
    scale = float(1 << (8 * width - 1))
    ints = np.clip(np.round(samples * scale), -scale, scale - 1).astype(np.int64)
    if width == 1:
        raw = (ints + 128).astype(np.uint8).tobytes()
    elif width == 3:
        u = ints.astype(np.int64) & 0xFFFFFF
        raw = np.stack([u & 255, (u >> 8) & 255, (u >> 16) & 255], -1).astype(np.uint8).tobytes()
    else:
        raw = ints.astype("<i2" if width == 2 else "<i4").tobytes()
    with wave.open(str(path), "wb") as f:
        f.setnchannels(samples.shape[1])
        f.setsampwidth(width)
        f.setframerate(rate)
        f.writeframes(raw)


@pytest.fixture
def speech(tmp_path):
    """cat/ with 3 clips, dog/ with 2 clips of different lengths; each clip's value is
    constant and encodes (class, index)."""
    for label, (name, count) in enumerate([("cat", 3), ("dog", 2)]):
        os.makedirs(tmp_path / name)
        for i in range(count):
            value = 0.25 * label + 0.05 * (i + 1)
            _write_wav(tmp_path / name / f"{i}.wav", np.full((10 + 5 * i, 1), value))
    (tmp_path / "dog" / "notes.txt").write_text("not audio")
    return tmp_path


@pytest.mark.parametrize("width", [1, 2, 3, 4])
def test_read_wav_bit_depths(tmp_path, width):
    rng = np.random.default_rng(width)
    x = rng.uniform(-0.9, 0.9, (17, 2))
    _write_wav(tmp_path / "a.wav", x, width=width)
    got = read_wav(str(tmp_path / "a.wav"))
    assert got.dtype == np.float32 and got.shape == (17, 2)
    np.testing.assert_allclose(got, x, atol=1.0 / (1 << (8 * width - 1)) + 1e-7)


def test_read_wav_resample_and_length(tmp_path):
    t = np.arange(800) / 8000
    _write_wav(tmp_path / "a.wav", np.sin(2 * np.pi * 50 * t)[:, None])
    got = read_wav(str(tmp_path / "a.wav"), sampling_rate=4000)
    assert got.shape == (400, 1)
    np.testing.assert_allclose(got[:, 0], np.sin(2 * np.pi * 50 * np.arange(400) / 4000),
                               atol=1e-3)
    assert read_wav(str(tmp_path / "a.wav"), output_sequence_length=1000).shape == (1000, 1)
    assert read_wav(str(tmp_path / "a.wav"), output_sequence_length=5).shape == (5, 1)


def test_inferred_labels_and_padding(speech):
    ds = fkeras.utils.audio_dataset_from_directory(speech, batch_size=8, shuffle=False,
                                                   verbose=False)
    assert ds.class_names == ["cat", "dog"]
    (audio, labels), = list(ds)
    assert audio.shape == (5, 20, 1) and audio.dtype == np.float32
    np.testing.assert_array_equal(labels, [0, 0, 0, 1, 1])
    # every clip's value encodes its class and index; the rest of the row is zero padding
    for row, lab in zip(audio[:, :, 0], labels):
        value = row[0]
        assert round((value - 0.25 * lab) / 0.05) in (1, 2, 3)
        length = 10 + 5 * (round((value - 0.25 * lab) / 0.05) - 1)
        np.testing.assert_allclose(row[:length], value, atol=1e-4)
        assert np.all(row[length:] == 0)


@pytest.mark.parametrize("label_mode,shape,dtype", [("int", (5,), np.int32),
                                                    ("categorical", (5, 2), np.float32),
                                                    ("binary", (5, 1), np.float32)])
def test_label_modes(speech, label_mode, shape, dtype):
    ds = fkeras.utils.audio_dataset_from_directory(speech, label_mode=label_mode, batch_size=5,
                                                   output_sequence_length=12, seed=1,
                                                   verbose=False)
    audio, labels = next(iter(ds))
    assert audio.shape == (5, 12, 1) and labels.shape == shape and labels.dtype == dtype


def test_labels_none_list_and_ragged(speech):
    ds = fkeras.utils.audio_dataset_from_directory(speech, labels=None, batch_size=2,
                                                   shuffle=False, ragged=True, verbose=False)
    batches = list(ds)
    assert len(ds) == 3 and isinstance(batches[0], list)
    assert [len(c) for c in batches[0]] == [10, 15]
    ds = fkeras.utils.audio_dataset_from_directory(speech, labels=[4, 3, 2, 1, 0],
                                                   batch_size=None, shuffle=False,
                                                   verbose=False)
    assert [int(lab) for _, lab in ds] == [4, 3, 2, 1, 0]


def test_validation_split_both_is_disjoint(speech):
    train, val = fkeras.utils.audio_dataset_from_directory(
        speech, validation_split=0.4, subset="both", seed=3, verbose=False)
    assert len(train.file_paths) == 3 and len(val.file_paths) == 2
    assert not set(train.file_paths) & set(val.file_paths)
    again = fkeras.utils.audio_dataset_from_directory(
        speech, validation_split=0.4, subset="validation", seed=3, verbose=False)
    assert again.file_paths == val.file_paths


def test_class_names_select_order(speech):
    ds = fkeras.utils.audio_dataset_from_directory(speech, class_names=["dog", "cat"],
                                                   shuffle=False, verbose=False)
    _, labels = next(iter(ds))
    np.testing.assert_array_equal(labels, [0, 0, 1, 1, 1])


@pytest.mark.parametrize("kwargs,match", [
    ({"label_mode": "sparse"}, "label_mode"),
    ({"ragged": True, "output_sequence_length": 4}, "Cannot set both"),
    ({"sampling_rate": 0}, "higher than 0"),
    ({"sampling_rate": 1.5}, "integer value"),
    ({"validation_split": 0.2, "subset": "training"}, "provide a `seed`"),
    ({"validation_split": 1.5, "subset": "training", "seed": 1}, "between 0 and 1"),
    ({"labels": "names"}, "list/tuple of integer"),
    ({"labels": [0, 1], "shuffle": False}, "match the number of files"),
])
def test_argument_errors(speech, kwargs, match):
    with pytest.raises(ValueError, match=match):
        fkeras.utils.audio_dataset_from_directory(speech, verbose=False, **kwargs)


def test_empty_directory(tmp_path):
    with pytest.raises(ValueError, match="No audio files found"):
        fkeras.utils.audio_dataset_from_directory(tmp_path, labels=None, verbose=False)


def test_fit_on_audio_batches(speech):
    ds = fkeras.utils.audio_dataset_from_directory(speech, batch_size=2, seed=0,
                                                   output_sequence_length=20, verbose=False)
    model = fkeras.Sequential([fkeras.Input((20, 1)), fkeras.layers.Flatten(),
                               fkeras.layers.Dense(2)])
    model.compile("sgd", fkeras.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(ds, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])
