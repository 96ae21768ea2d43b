"""Array helpers of the lookup layers (StringLookup, IntegerLookup, TextVectorization).

Everything here works on NumPy arrays and plain Python tokens:
- `as_string_array` / `as_integer_array`: the inputs a lookup layer accepts (NumPy str/bytes/
  object arrays, nested lists, scalars) as an object array of `str` or an int64 array;
- `ordered_vocabulary`: Keras's adapt order (count descending, ties by token descending,
  strings compared as their UTF-8 bytes);
- `lookup_indices`: tokens -> indices through a dict (strings) or a sorted key array (ints);
- `encode`: Keras's one_hot / multi_hot / count / tf_idf encodings of index arrays.
"""

import itertools

import numpy as np

from fkeras.backend import devices as _devices
from fkeras.utils.py_dataset import PyDataset


def _decode(value, encoding):
    if isinstance(value, bytes):
        return value.decode(encoding)
    if isinstance(value, str):
        return value
    raise TypeError(f"Expected string tokens, received {type(value).__name__}: {value!r}")


def as_string_array(data, encoding, what):
    """`data` (str/bytes/object array, nested list of str, scalar) as an object array of
    Python `str` with the same shape; bytes are decoded with `encoding`.

    Raises:
        ValueError: when the data holds numbers (naming `what`, the layer).
    """
    array = np.asarray(data, dtype=object) if not isinstance(data, np.ndarray) else data
    if array.dtype.kind == "U":
        return array.astype(object)
    if array.dtype.kind == "S":
        return np.char.decode(array, encoding).astype(object)
    if array.dtype.kind == "O":
        try:
            flat = [_decode(v, encoding) for v in array.ravel().tolist()]
        except TypeError as e:
            raise ValueError(f"{what} expects string inputs. {e}") from None
        out = np.empty(len(flat), dtype=object)
        out[:] = flat
        return out.reshape(array.shape)
    raise ValueError(f"{what} expects string inputs (a NumPy str/bytes/object array or a "
                     f"list of str). Received an array of dtype {array.dtype}.")


def as_integer_array(data, what):
    """`data` as an int64 array (floats holding whole numbers are accepted, as Keras casts)."""
    array = _devices.host_array(data)
    if array.dtype.kind in "iub":
        return array.astype(np.int64, copy=False)
    if array.dtype.kind == "f" and np.all(np.isfinite(array)) and \
            np.array_equal(array, np.trunc(array)):
        return array.astype(np.int64)
    raise ValueError(f"{what} expects integer inputs. Received an array of dtype "
                     f"{array.dtype}" + (f": {array.ravel()[:5].tolist()}" if array.size
                                         else "."))


def ordered_vocabulary(counts, is_string):
    """Tokens of a {token: count} dict, most frequent first, ties by token descending
    (Keras sorts strings by their UTF-8 bytes)."""
    if is_string:
        return [t for _, _, t in sorted(((c, t.encode("utf-8"), t) for t, c in counts.items()),
                                        reverse=True)]
    return [t for _, t in sorted(((c, t) for t, c in counts.items()), reverse=True)]


class IndexTable:
    """token -> index for a fixed vocabulary; misses get `default`."""

    def __init__(self, tokens, start, is_string):
        self.is_string = is_string
        self.size = len(tokens)
        if is_string:
            self._dict = {t: start + i for i, t in enumerate(tokens)}
        else:
            keys = np.asarray(tokens, dtype=np.int64)
            order = np.argsort(keys, kind="stable")
            self._keys = keys[order]
            self._values = (start + order).astype(np.int64)

    def lookup(self, tokens, default):
        """Indices of `tokens` (an object array of str, or an int64 array)."""
        if self.is_string:
            flat = tokens.ravel().tolist()
            out = np.array(list(map(self._dict.get, flat, itertools.repeat(default, len(flat)))),
                           dtype=np.int64)
            return out.reshape(tokens.shape)
        if self.size == 0:
            return np.full(tokens.shape, default, dtype=np.int64)
        pos = np.searchsorted(self._keys, tokens)
        pos = np.minimum(pos, self.size - 1)
        found = self._keys[pos] == tokens
        return np.where(found, self._values[pos], default).astype(np.int64)


def encode(indices, output_mode, depth, idf_weights=None):
    """Keras 3's encodings of lookup indices (negative indices, dropped mask tokens, count
    nowhere): "one_hot" per element (a trailing axis of 1 is replaced), "multi_hot"/"count"/
    "tf_idf" over the last axis (a rank-1 input is one sample). int64, tf_idf float32."""
    if indices.ndim == 0:
        indices = indices.reshape(1)
    if output_mode == "one_hot":
        if indices.ndim > 1 and indices.shape[-1] == 1:
            indices = indices.reshape(indices.shape[:-1])
        out = np.zeros(indices.shape + (depth,), dtype=np.int64)
        valid = (indices >= 0) & (indices < depth)
        flat = out.reshape(-1, depth)
        rows = np.nonzero(valid.ravel())[0]
        flat[rows, indices.ravel()[rows]] = 1
        return out
    lead = indices.shape[:-1]
    rows = indices.reshape(-1, indices.shape[-1])
    out = np.zeros((rows.shape[0], depth), dtype=np.int64)
    valid = (rows >= 0) & (rows < depth)
    r, c = np.nonzero(valid)
    np.add.at(out, (r, rows[r, c]), 1)
    if output_mode == "multi_hot":
        out = np.minimum(out, 1)
    out = out.reshape(lead + (depth,))
    if output_mode == "tf_idf":
        return (out.astype(np.float32) * np.asarray(idf_weights, np.float32)[:depth])
    return out


def _x_part(batch):
    """Keras adapts on the inputs of an `(x, y[, sample_weight])` batch."""
    return batch[0] if isinstance(batch, tuple) else batch


def adapt_batches(data, steps, layer_name):
    """The batches `adapt(data, steps)` reads, as Keras 3 reads them: an array, a list or a
    tuple is one batch (the whole dataset); a PyDataset gives its batches' inputs; any other
    iterable (a generator, a list iterator) yields batches, at most `steps` of them."""
    if steps is not None and (not isinstance(steps, (int, np.integer)) or steps < 1):
        raise ValueError(f'Layer "{layer_name}": `steps` in adapt() must be a positive '
                         f"integer or None. Received: steps={steps}")
    if data is None or isinstance(data, dict):
        raise TypeError(f'Layer "{layer_name}": unsupported data type for adapt(): '
                        f"{type(data).__name__}. adapt() supports NumPy arrays, lists, "
                        "PyDatasets and iterables of batches.")
    if isinstance(data, (np.ndarray, list, tuple, str, bytes)) or hasattr(data, "__array__"):
        yield data
        return
    if isinstance(data, PyDataset):
        source = (data[i] for i in range(len(data)))
    elif hasattr(data, "__iter__"):
        source = iter(data)
    else:
        raise TypeError(f'Layer "{layer_name}": unsupported data type for adapt(): '
                        f"{type(data).__name__}. adapt() supports NumPy arrays, lists, "
                        "PyDatasets and iterables of batches.")
    for i, batch in enumerate(source):
        if steps is not None and i >= steps:
            break
        yield _x_part(batch)
