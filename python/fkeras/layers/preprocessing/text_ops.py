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

_TABLES = {
    "lower": str.maketrans(string.ascii_uppercase, string.ascii_lowercase),
    "strip_punctuation": str.maketrans("", "", string.punctuation),
    "lower_and_strip_punctuation": str.maketrans(string.ascii_uppercase,
                                                 string.ascii_lowercase, string.punctuation),
}
_TOKEN = re.compile("[^ \t\n\v\f\r]+")
# Python's str.split() also splits ASCII text on \x1c-\x1f; TensorFlow does not.
_PY_ONLY_SEPARATORS = re.compile("[\x1c-\x1f]")


def standardize(texts, mode):
    """Built-in `standardize` (`mode` a key of _TABLES) on a list of str."""
    table = _TABLES[mode]
    return [t.translate(table) for t in texts]


def split_whitespace(text):
    if text.isascii() and not _PY_ONLY_SEPARATORS.search(text):
        return text.split()
    return _TOKEN.findall(text)


def split_characters(text):
    return list(text)


def ngrams(tokens, widths):
    """All `widths`-grams of a token list, widths in the order given."""
    out = []
    for w in widths:
        out.extend(" ".join(tokens[i:i + w]) for i in range(len(tokens) - w + 1))
    return out


def object_array(values, shape):
    """An object array of `shape` holding the str of `values` (a flat list)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out.reshape(shape)


def as_unicode(array):
    """An object array of str as a NumPy unicode array (what a user callable receives, so
    `np.char`/`np.strings` functions work on it)."""
    if array.size == 0:
        return np.zeros(array.shape, dtype="<U1")
    return np.asarray(array.tolist(), dtype=str).reshape(array.shape)
