"""`pad_sequences` (keras.utils.pad_sequences): lists of sequences to one padded array."""

import numpy as np


def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre",
                  value=0.0):
    """Pads sequences to the same length.

    Sequences longer than `maxlen` are truncated (from the start with `truncating="pre"`,
    from the end with `"post"`); shorter ones are filled with `value` before (`padding="pre"`)
    or after (`"post"`) their items.

    Args:
        sequences: list of sequences (each a list or array; items may be scalars or arrays
            of one common shape).
        maxlen: length of the output; defaults to the longest sequence.
        dtype: dtype of the output.
        padding: `"pre"` or `"post"`.
        truncating: `"pre"` or `"post"`.
        value: the padding value.

    Returns:
        A NumPy array of shape `(len(sequences), maxlen) + item_shape`.

    Example:

    >>> pad_sequences([[1, 2], [3]], padding="post")
    array([[1, 2],
           [3, 0]], dtype=int32)
    """
    if not hasattr(sequences, "__len__"):
        raise ValueError(f"`sequences` must be iterable with a length. Received: {sequences!r}")
    for name, v in (("padding", padding), ("truncating", truncating)):
        if v not in ("pre", "post"):
            raise ValueError(f'`{name}` must be "pre" or "post". Received: {name}={v!r}')
    arrays = [np.asarray(s) for s in sequences]
    item_shape = ()
    for a in arrays:
        if a.ndim == 0:
            raise ValueError(f"`sequences` must be a list of iterables. Found a scalar: {a!r}")
        if a.shape[0]:
            item_shape = a.shape[1:]
            break
    if maxlen is None:
        maxlen = max((len(a) for a in arrays), default=0)
    is_text = np.issubdtype(np.dtype(dtype), np.str_) or np.dtype(dtype) == object
    if isinstance(value, str) and not is_text:
        raise ValueError(f"`dtype` {dtype} is not compatible with `value`'s type "
                         f"{type(value)}. Use `dtype=object` for variable-length strings.")
    out = np.full((len(arrays), maxlen) + item_shape, value, dtype=dtype)
    for i, a in enumerate(arrays):
        if not len(a) or not maxlen:
            continue
        kept = a[-maxlen:] if truncating == "pre" else a[:maxlen]
        if kept.shape[1:] != item_shape:
            raise ValueError(f"Shape of sample {kept.shape[1:]} of sequence at position {i} "
                             f"is different from expected shape {item_shape}")
        if padding == "post":
            out[i, :len(kept)] = kept
        else:
            out[i, -len(kept):] = kept
    return out
