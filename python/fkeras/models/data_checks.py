"""Checks of user data against a model's inputs, before any computation (stricter than Keras:
no silent broadcasting, a missing batch dimension is an error naming both shapes)."""

import numpy as np

from fkeras.utils import nest


def as_input_arrays(model, x):
    """The model's inputs as a flat list of arrays (x: array, list, tuple or dict by name)."""
    if isinstance(x, dict):
        names = getattr(model, "input_names", None)
        if names is None:
            raise ValueError("Dict inputs need a functional model with named inputs.")
        missing = [n for n in names if n not in x]
        if missing:
            raise ValueError(f"Missing data for input(s) {missing}. Expected keys: {names}, "
                             f"received keys: {sorted(x)}.")
        flat = [x[n] for n in names]
    elif isinstance(x, (list, tuple)):
        flat = list(x)
    else:
        flat = [x]
    return [_to_array(a) for a in flat]


def _to_array(a):
    if hasattr(a, "numpy") and not isinstance(a, np.ndarray):
        a = a.numpy()
    a = np.asarray(a)
    if a.dtype.kind == "f" and a.dtype != np.float32:
        a = a.astype(np.float32)
    elif a.dtype.kind in "iub" and a.dtype != np.int64:
        a = a.astype(np.int64) if a.dtype.kind != "b" else a.astype(np.float32)
    return a


def num_samples(arrays):
    sizes = {len(a) if a.ndim else 1 for a in arrays}
    if len(sizes) > 1:
        raise ValueError(
            "Data cardinality is ambiguous: all input arrays should have the same number of "
            f"samples. Received sizes: {[len(a) for a in arrays]}"
        )
    return sizes.pop() if sizes else 0


def fitted_shape(shape, want):
    """`shape` with one trailing 1 removed or added when that makes its rank `want`'s (Keras 3
    squeezes or expands such an input of a Functional model), else `shape` unchanged."""
    if len(shape) == len(want) + 1 and shape[-1] == 1:
        return shape[:-1]
    if len(shape) + 1 == len(want) and want[-1] == 1:
        return shape + (1,)
    return shape


def fit_input_rank(value, want):
    """`value` squeezed or expanded on its last axis as `fitted_shape` says (through
    `ops.squeeze` / `ops.expand_dims`, so gradients flow), else `value` itself."""
    from fkeras import ops

    rank = len(value.shape)
    if rank == len(want) + 1 and value.shape[-1] == 1:
        return ops.squeeze(value, axis=-1)
    if rank + 1 == len(want) and want[-1] == 1:
        return ops.expand_dims(value, axis=-1)
    return value


def fixed_input_dims(model):
    """Whether data must match the model's Input dims beyond the batch axis: a Functional
    model checks them; a Sequential model, as in Keras 3, checks only the rank (its layers
    check what they need: a stack of Dense layers takes any sequence length)."""
    return getattr(model, "_fk_fixed_input_dims", True)


def check_model_inputs(model, arrays, context="call"):
    """Raises ValueError if an array does not fit its model input (rank or fixed dims)."""
    inputs = model._flat_inputs
    flat = nest.flatten(arrays) if isinstance(arrays, (list, tuple)) else [arrays]
    if len(flat) != len(inputs):
        raise ValueError(
            f'Model "{model.name}" expects {len(inputs)} input(s), but it received '
            f"{len(flat)} input arrays."
        )
    for t, a in zip(inputs, flat):
        name = t._keras_history.layer.name
        want = t.shape
        shape = fitted_shape(tuple(np.shape(a)), want)
        if len(shape) != len(want):
            raise ValueError(
                f"Error when checking input: expected {name} to have {len(want)} dimensions, "
                f"but got array with shape {shape}. The model expects inputs of shape {want} "
                "(None is the batch dimension)."
            )
        for i, (w, g) in enumerate(zip(want, shape) if fixed_input_dims(model) else ()):
            if i > 0 and w is not None and w != g:
                raise ValueError(
                    f"Error when checking input: expected {name} to have shape "
                    f"{tuple(want[1:])} but got array with shape {shape[1:]} "
                    f"(full shapes: expected {want}, received {shape})."
                )
