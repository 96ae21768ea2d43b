"""Integer ids to Keras 3's categorical encodings ("int", "one_hot", "multi_hot", "count"), in
NumPy, shared by CategoryEncoding, Discretization, Hashing and HashedCrossing.

Shapes follow Keras 3 (`numerical_utils.encode_categorical_inputs`): a scalar counts as one id;
"one_hot" drops a trailing axis of size 1 and appends `depth`; "multi_hot" and "count" reduce
axis 1 (axis 0 for a vector: one sample's ids) and append `depth`. Negative ids encode as an
all-zero row (Keras's one_hot); ids >= depth are an error naming the layer (Keras's torch
backend fails inside `one_hot`). Float ids are truncated to integers.
"""

import numpy as np

OUTPUT_MODES = ("int", "one_hot", "multi_hot", "count")


def check_output_mode(output_mode, allowed, layer_name):
    if output_mode not in allowed:
        raise ValueError(f'Layer "{layer_name}": invalid value for argument `output_mode`. '
                         f"Expected one of {allowed}. Received: output_mode={output_mode}")


def encoded_shape(shape, output_mode, depth):
    """The output shape of `encode` for an input of `shape` (None entries allowed)."""
    shape = tuple(shape)
    if output_mode == "int":
        return shape
    if not shape:
        return (1, depth) if output_mode == "one_hot" else (depth,)
    if output_mode == "one_hot":
        return (shape[:-1] if len(shape) > 1 and shape[-1] == 1 else shape) + (depth,)
    return (shape[0:1] + shape[2:] if len(shape) > 1 else ()) + (depth,)


def encode(ids, output_mode, depth, dtype, layer_name, count_weights=None):
    """Encodes the integer array `ids` (see the module docstring); returns a NumPy array."""
    ids = np.asarray(ids)
    if output_mode == "int":
        return ids.astype(dtype)
    if ids.dtype.kind == "f":
        ids = np.trunc(ids)
    ids = ids.astype(np.int64)
    if ids.size and ids.max() >= depth:
        raise ValueError(f'Layer "{layer_name}": input values must be in the range [0, {depth})'
                         f" (`num_tokens`/`num_bins`). Received a value of {int(ids.max())}.")
    if ids.ndim == 0:
        ids = ids.reshape(1)
        if count_weights is not None:
            count_weights = np.reshape(count_weights, (1,))
    if output_mode == "one_hot":
        if ids.ndim > 1 and ids.shape[-1] == 1:
            ids = ids.reshape(ids.shape[:-1])
        return (ids[..., None] == np.arange(depth)).astype(dtype)
    hot = ids[..., None] == np.arange(depth)
    axis = 1 if ids.ndim > 1 else 0
    if output_mode == "multi_hot":
        return hot.any(axis=axis).astype(dtype)
    if count_weights is not None:
        weights = np.broadcast_to(np.asarray(count_weights, np.float64), ids.shape)
        return (hot * weights[..., None]).sum(axis=axis).astype(dtype)
    return hot.sum(axis=axis).astype(dtype)
