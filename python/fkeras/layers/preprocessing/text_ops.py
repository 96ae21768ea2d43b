"""The string steps of TextVectorization, on NumPy object arrays of `str`, as TensorFlow's
string ops do them under Keras 3:
- "lower" lowercases ASCII letters only (`tf.strings.lower`: "Ünïcode" keeps its "Ü");
- "strip_punctuation" removes the 32 ASCII punctuation characters;
- "whitespace" splits on runs of ASCII whitespace (space, \\t, \\n, \\v, \\f, \\r), so a
  no-break space stays inside a token; "character" splits into Unicode code points;
- n-grams join tokens with one space, all widths in the order given, each width in text order.
"""

import re
import string

import numpy as np

_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_STRIP = str.maketrans("", "", string.punctuation)
_WHITESPACE = re.compile("[ \t\n\v\f\r]+")


def lower(text):
    return text.translate(_LOWER)


def strip_punctuation(text):
    return text.translate(_STRIP)


def split_whitespace(text):
    return [t for t in _WHITESPACE.split(text) if t]


def split_characters(text):
    return list(text)


def ngrams(tokens, widths):
    """All `widths`-grams of a token list, widths in the order given."""
    out = []
    for w in widths:
        out.extend(" ".join(tokens[i:i + w]) for i in range(len(tokens) - w + 1))
    return out


def map_strings(fn, array):
    """`fn` on each element of an object array of str (same shape)."""
    out = np.empty(array.size, dtype=object)
    out[:] = [fn(t) for t in array.ravel().tolist()]
    return out.reshape(array.shape)


def as_unicode(array):
    """An object array of str as a NumPy unicode array (what a user callable receives, so
    `np.char`/`np.strings` functions work on it)."""
    if array.size == 0:
        return np.zeros(array.shape, dtype="<U1")
    return np.asarray(array.tolist(), dtype=str).reshape(array.shape)
