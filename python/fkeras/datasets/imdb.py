"""IMDB movie-review sentiment (downloaded into the Keras cache by get_file), Keras's
preprocessing: shuffled with `seed`, words re-indexed from `index_from`, `start_char`
prepended, words outside [skip_top, num_words) replaced by `oov_char`."""

import io
import json
import zipfile

import numpy as np

from fkeras.utils.file_utils import get_file

ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"


def _read_npy(stream):
    """One .npy member: numeric arrays without pickle; object arrays (the ragged sequences)
    through the restricted unpickler, which only rebuilds NumPy arrays and plain lists."""
    from fkeras.datasets.cifar10 import _RestrictedUnpickler

    try:
        return np.lib.format.read_array(stream, allow_pickle=False)
    except ValueError:
        stream.seek(0)
        major, _ = np.lib.format.read_magic(stream)
        if major == 1:
            np.lib.format.read_array_header_1_0(stream)
        else:  # versions 2 and 3 share the header layout
            np.lib.format.read_array_header_2_0(stream)
        return _RestrictedUnpickler(stream, encoding="latin1").load()


def _load_ragged_npz(path):
    out = {}
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            if name.endswith(".npy"):
                out[name[:-4]] = _read_npy(io.BytesIO(z.read(name)))
    return out


def load_data(path="imdb.npz", num_words=None, skip_top=0, maxlen=None, seed=113,
              start_char=1, oov_char=2, index_from=3, **kwargs):
    """Loads IMDB: `(x_train, y_train), (x_test, y_test)`; x are object arrays of word-index
    lists, y int labels 0/1 (25000 reviews each)."""
    path = get_file(fname=path, origin=f"{ORIGIN}imdb.npz",
                    file_hash="69664113be75683a8fe16e3ed0ab59fda8886cb3cd7ada244f7d9544e4676b9f")
    f = _load_ragged_npz(path)
    x_train, labels_train, x_test, labels_test = (f["x_train"], f["y_train"], f["x_test"],
                                                  f["y_test"])
    rng = np.random.RandomState(seed)
    idx = np.arange(len(x_train))
    rng.shuffle(idx)
    x_train, labels_train = x_train[idx], labels_train[idx]
    idx = np.arange(len(x_test))
    rng.shuffle(idx)
    x_test, labels_test = x_test[idx], labels_test[idx]
    head = [start_char] if start_char is not None else []
    x_train = [head + [w + index_from for w in x] for x in x_train]
    x_test = [head + [w + index_from for w in x] for x in x_test]
    if maxlen:
        keep = [i for i, x in enumerate(x_train) if len(x) < maxlen]
        x_train, labels_train = [x_train[i] for i in keep], labels_train[keep]
        keep = [i for i, x in enumerate(x_test) if len(x) < maxlen]
        x_test, labels_test = [x_test[i] for i in keep], labels_test[keep]
        if not x_train or not x_test:
            raise ValueError(f"After filtering for sequences shorter than maxlen={maxlen}, no "
                             "sequence was kept. Increase maxlen.")
    xs = x_train + x_test
    labels = np.concatenate([labels_train, labels_test])
    if not num_words:
        num_words = max(max(x) for x in xs)
    if oov_char is not None:
        xs = [[w if skip_top <= w < num_words else oov_char for w in x] for x in xs]
    else:
        xs = [[w for w in x if skip_top <= w < num_words] for x in xs]
    n = len(x_train)
    x_train, x_test = np.empty(n, dtype=object), np.empty(len(xs) - n, dtype=object)
    x_train[:] = xs[:n]
    x_test[:] = xs[n:]
    return (x_train, labels[:n]), (x_test, labels[n:])


def get_word_index(path="imdb_word_index.json"):
    """The dict from words to their index in the IMDB data."""
    path = get_file(fname=path, origin=f"{ORIGIN}imdb_word_index.json",
                    file_hash="bfafd718b763782e994055a2d397834f")
    with open(path) as f:
        return json.load(f)
