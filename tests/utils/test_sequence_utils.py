"""keras.utils.pad_sequences: NumPy references, Keras's errors, and parity with Keras 3."""

import numpy as np
import pytest

import fkeras

RAGGED = [[711, 632, 71], [73, 8, 3215, 55, 927], [83, 91, 1, 645, 1253, 927], []]

CASES = [
    dict(),
    dict(padding="post"),
    dict(maxlen=4),
    dict(maxlen=4, truncating="post"),
    dict(maxlen=4, padding="post", truncating="post"),
    dict(maxlen=8, value=-1),
    dict(dtype="float32", value=0.5, padding="post"),
]


def _reference(seqs, maxlen=None, dtype="int32", padding="pre", truncating="pre", value=0.0):
    maxlen = max(len(s) for s in seqs) if maxlen is None else maxlen
    rows = []
    for s in seqs:
        s = list(s)[-maxlen:] if truncating == "pre" else list(s)[:maxlen]
        fill = [value] * (maxlen - len(s))
        rows.append(fill + s if padding == "pre" else s + fill)
    return np.array(rows, dtype=dtype)


@pytest.mark.parametrize("kwargs", CASES)
def test_pad_sequences_matches_reference(kwargs):
    out = fkeras.utils.pad_sequences(RAGGED, **kwargs)
    ref = _reference(RAGGED, **kwargs)
    assert out.dtype == ref.dtype
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("kwargs", CASES)
def test_pad_sequences_keras_parity(kwargs):
    keras = pytest.importorskip("keras")
    np.testing.assert_array_equal(fkeras.utils.pad_sequences(RAGGED, **kwargs),
                                  keras.utils.pad_sequences(RAGGED, **kwargs))


def test_pad_sequences_vector_items():
    seqs = [np.ones((2, 3)), np.full((4, 3), 2.0)]
    out = fkeras.utils.pad_sequences(seqs, dtype="float32", padding="post")
    assert out.shape == (2, 4, 3)
    np.testing.assert_array_equal(out[0, 2:], 0.0)
    np.testing.assert_array_equal(out[1], 2.0)


@pytest.mark.parametrize("kwargs, match", [
    (dict(padding="middle"), "padding"),
    (dict(truncating="both"), "truncating"),
    (dict(value="x"), "dtype"),
])
def test_pad_sequences_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        fkeras.utils.pad_sequences(RAGGED, **kwargs)


def test_pad_sequences_mismatched_item_shapes():
    with pytest.raises(ValueError, match="different from expected shape"):
        fkeras.utils.pad_sequences([np.ones((2, 3)), np.ones((2, 4))], dtype="float32")
