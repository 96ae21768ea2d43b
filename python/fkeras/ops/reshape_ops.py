"""Shape ops: reshape, transpose, concatenate, getitem, expand_dims, squeeze, flatten-like."""

import numpy as np

from fkeras.backend import devices as _devices
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.ops import shape_utils as su
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import Op, apply
from fkeras.ops.xp_native import float32_native


def reshape_spec(shape, newshape, op_name="reshape"):
    """Output shape of a reshape with at most one -1, None (unknown) dims allowed in `shape`.

    The batch dimension stays None when the input's total size is unknown.
    """
    newshape = tuple(int(d) if d is not None else -1 for d in newshape)
    if sum(1 for d in newshape if d == -1) > 1:
        raise ValueError(f"`{op_name}`: can only specify one unknown dimension (-1); "
                         f"received {newshape}.")
    known = [d for d in shape if d is not None]
    total = int(np.prod(known)) if known else 1
    fixed = int(np.prod([d for d in newshape if d != -1])) if newshape else 1
    if None in shape:
        if -1 in newshape:
            return tuple(None if d == -1 else d for d in newshape)
        return newshape
    if -1 in newshape:
        if fixed == 0 or total % fixed:
            raise ValueError(f"`{op_name}`: total size of new array must be unchanged, "
                             f"input_shape = {tuple(shape)}, output_shape = {newshape}")
        return tuple(total // fixed if d == -1 else d for d in newshape)
    if fixed != total:
        raise ValueError(f"`{op_name}`: total size of new array must be unchanged, "
                         f"input_shape = {tuple(shape)}, output_shape = {newshape}")
    return newshape


class Reshape(Op):
    name = "reshape"
    device_native = True

    def output_spec(self, x, newshape=None):
        return reshape_spec(su.shape_of(x), newshape)

    def forward(self, dev, x, newshape=None):
        return x.reshape(newshape), x.shape

    def backward(self, dev, shape, g, needs, newshape=None):
        return (g.reshape(shape),)


class Transpose(Op):
    name = "transpose"

    def output_spec(self, x, axes=None):
        shape = su.shape_of(x)
        axes = tuple(reversed(range(len(shape)))) if axes is None else axes
        return tuple(shape[a] for a in axes)

    def forward(self, dev, x, axes=None):
        return np.ascontiguousarray(np.transpose(x, axes)), None

    def backward(self, dev, saved, g, needs, axes=None):
        inv = None if axes is None else tuple(np.argsort(axes))
        return (np.ascontiguousarray(np.transpose(g, inv)),)


class Concatenate(Op):
    name = "concatenate"
    device_native = True  # dev.xp's concatenate / split (float32 inputs on a non-host device)
    native_on = float32_native

    def output_spec(self, *xs, axis=0):
        shapes = [su.shape_of(x) for x in xs]
        rank = len(shapes[0])
        ax = su.normalize_axis(axis, rank, "concatenate")
        out = list(shapes[0])
        for s in shapes[1:]:
            if len(s) != rank or any(i != ax and a is not None and b is not None and a != b
                                     for i, (a, b) in enumerate(zip(s, shapes[0]))):
                raise ValueError(
                    "A `Concatenate` layer requires inputs with matching shapes except for "
                    f"the concatenation axis. Received: input_shape={shapes}"
                )
        sizes = [s[ax] for s in shapes]
        out[ax] = None if None in sizes else int(np.sum(sizes))
        for i in range(rank):
            if i != ax and out[i] is None:
                out[i] = next((s[i] for s in shapes if s[i] is not None), None)
        return tuple(out)

    def forward(self, dev, *xs, axis=0):
        # the inputs are saved (the tape holds them anyway)
        return dev.xp.concatenate(xs, axis=axis), xs

    def backward(self, dev, xs, g, needs, axis=0):
        xp = dev.xp
        splits = np.cumsum([x.shape[axis] for x in xs])[:-1]
        parts = xp.split(g, splits, axis=axis)
        return tuple(xp.ascontiguousarray(p) if n else None for p, n in zip(parts, needs))


class GetItem(Op):
    name = "getitem"

    def output_spec(self, x, key=None):
        shape = su.shape_of(x)
        basic = _basic_index_shape(shape, key)
        if basic is not None:
            return basic
        # Array keys (advanced indexing): NumPy's rule on a probe with unknown dims as 1.
        probe = np.empty([1 if d is None else d for d in shape], dtype=np.bool_)
        out = probe[key].shape
        # A None (batch) dim stays None when it is kept whole.
        k = key if isinstance(key, tuple) else (key,)
        result = list(out)
        if shape and shape[0] is None and k and isinstance(k[0], slice) and k[0] == slice(None):
            result[0] = None
        return tuple(result)

    def forward(self, dev, x, key=None):
        return np.asarray(x[key], order="C"), x.shape  # keeps 0-d results 0-d

    def backward(self, dev, shape, g, needs, key=None):
        out = np.zeros(shape, dtype=g.dtype)
        np.add.at(out, key, g)
        return (out,)


def _basic_index_shape(shape, key):
    """Shape of x[key] for a basic key (ints, slices, None, Ellipsis), None for other keys.
    A slice of an unknown (None) dimension is unknown, as in Keras; an int picks from it."""
    k = key if isinstance(key, tuple) else (key,)
    if not all(isinstance(i, (int, np.integer, slice)) and not isinstance(i, bool)
               or i is None or i is Ellipsis for i in k):
        return None
    if sum(i is Ellipsis for i in k) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 for i in k if i is not None and i is not Ellipsis)
    if consumed > len(shape):
        raise IndexError(f"too many indices: the tensor is {len(shape)}-dimensional, but "
                         f"{consumed} were indexed (key {key!r}).")
    if Ellipsis in k:
        at = k.index(Ellipsis)
        k = k[:at] + (slice(None),) * (len(shape) - consumed) + k[at + 1:]
    else:
        k = k + (slice(None),) * (len(shape) - consumed)
    out, dims = [], iter(shape)
    for i in k:
        if i is None:
            out.append(1)
            continue
        d = next(dims)
        if isinstance(i, slice):
            out.append(None if d is None else len(range(*i.indices(d))))
        elif d is not None and not -d <= i < d:
            raise IndexError(f"index {int(i)} is out of bounds for a dimension of size {d} "
                             f"(key {key!r}).")
    return tuple(out)


class ExpandDims(Op):
    name = "expand_dims"

    def output_spec(self, x, axis=0):
        shape = list(su.shape_of(x))
        ax = axis if axis >= 0 else len(shape) + 1 + axis
        shape.insert(ax, 1)
        return tuple(shape)

    def forward(self, dev, x, axis=0):
        return np.expand_dims(x, axis), x.shape

    def backward(self, dev, shape, g, needs, axis=0):
        return (g.reshape(shape),)


class Squeeze(Op):
    name = "squeeze"

    def output_spec(self, x, axis=None):
        shape = su.shape_of(x)
        if axis is None:
            return tuple(d for d in shape if d != 1)
        axes = su.normalize_axes(axis, len(shape), "squeeze")
        return tuple(d for i, d in enumerate(shape) if i not in axes)

    def forward(self, dev, x, axis=None):
        return np.squeeze(x, axis=axis), x.shape

    def backward(self, dev, shape, g, needs, axis=None):
        return (g.reshape(shape),)


class Repeat(Op):
    """keras.ops.repeat: each element `repeats` times along `axis` (the flattened input when
    axis is None); `repeats` an int, or a tuple of ints, one per element along the axis (a
    1-tuple: every element that many times)."""

    name = "repeat"

    def output_spec(self, x, repeats=1, axis=None):
        shape = su.shape_of(x)
        if axis is None:
            size = None if None in shape else int(np.prod(shape))
            return (_repeated_size(size, repeats),)
        ax = su.normalize_axis(axis, len(shape), "repeat")
        out = list(shape)
        out[ax] = _repeated_size(shape[ax], repeats)
        return tuple(out)

    def forward(self, dev, x, repeats=1, axis=None):
        return np.repeat(x, repeats if isinstance(repeats, int) else np.asarray(repeats),
                         axis=axis), x.shape

    def backward(self, dev, shape, g, needs, repeats=1, axis=None):
        if isinstance(repeats, tuple) and len(repeats) == 1:
            repeats = repeats[0]
        if isinstance(repeats, int):
            if axis is None:
                return (g.reshape(-1, repeats).sum(axis=1).reshape(shape),)
            ax = axis % len(shape)
            split = shape[:ax] + (shape[ax], repeats) + shape[ax + 1:]
            return (np.ascontiguousarray(g.reshape(split).sum(axis=ax + 1)),)
        # Per-element counts: each output slice adds into the element it repeats.
        ax = 0 if axis is None else axis % len(shape)
        gm = np.moveaxis(g.reshape(-1) if axis is None else g, ax, 0)
        n = int(np.prod(shape)) if axis is None else shape[ax]
        out = np.zeros((n,) + gm.shape[1:], dtype=g.dtype)
        np.add.at(out, np.repeat(np.arange(n), repeats), gm)
        out = out.reshape(shape) if axis is None else np.moveaxis(out, 0, ax)
        return (np.ascontiguousarray(out),)


def _repeated_size(size, repeats):
    if isinstance(repeats, int):
        return None if size is None else size * repeats
    if len(repeats) == 1:
        return None if size is None else size * repeats[0]
    if size is not None and size != len(repeats):
        raise ValueError(f"`repeat`: `repeats` holds {len(repeats)} counts for an axis of "
                         f"size {size}; expected one count per element (or a single count).")
    return int(sum(repeats))


def reshape(x, newshape):
    return apply(_R["reshape"], x, newshape=tuple(newshape))


def transpose(x, axes=None):
    return apply(_R["transpose"], x, axes=None if axes is None else tuple(axes))


def concatenate(xs, axis=0):
    return apply(_R["concatenate"], *xs, axis=axis)


def getitem(x, key):
    """x[key] with NumPy indexing semantics (ints, slices, None, Ellipsis, integer and boolean
    arrays or tensors); differentiable with respect to x."""
    return apply(_R["getitem"], x, key=_index_key(key))


def _index_key(key):
    if type(key) is tuple:
        return tuple(_index_key(k) for k in key)
    buf = getattr(key, "_value", None)  # a Tensor or Variable used as an index
    if buf is not None:
        return _devices.host_array(buf)
    if isinstance(key, list) and any(isinstance(k, (slice, tuple)) or k is None or
                                     k is Ellipsis for k in key):
        return tuple(key)
    return key


def expand_dims(x, axis):
    return apply(_R["expand_dims"], x, axis=axis)


def squeeze(x, axis=None):
    return apply(_R["squeeze"], x, axis=axis)


def repeat(x, repeats, axis=None):
    """Repeats each element of `x` along `axis` (keras.ops.repeat; the flattened `x` when axis
    is None). `repeats`: a non-negative int, or integers (a list, array or tensor) with one
    count per element along the axis, or a single count."""
    counts = _repeat_counts(repeats)
    if not isinstance(counts, int):  # one count per element: checked before any kernel runs
        _R["repeat"].output_spec(x, counts, axis)
    return apply(_R["repeat"], x, repeats=counts, axis=axis)


def _repeat_counts(repeats):
    """An int, or a tuple of ints (per-element counts), from `repeats`; ValueError otherwise."""
    bad = ValueError("`repeat` supports a non-negative int `repeats` or a 1-D sequence of "
                     "non-negative ints (one per element along the axis). Received: "
                     f"repeats={repeats!r}")
    if isinstance(repeats, bool):
        raise bad
    if isinstance(repeats, (int, np.integer)):
        if repeats < 0:
            raise bad
        return int(repeats)
    if isinstance(repeats, KerasTensor):
        raise ValueError("`repeat` needs concrete `repeats` (the output shape depends on "
                         f"them); received the symbolic tensor {repeats!r}.")
    try:
        counts = _devices.host_array(repeats)
    except (TypeError, ValueError):
        raise bad from None
    if counts.dtype == bool or counts.dtype.kind not in "iu" or counts.ndim > 1 or (
            counts < 0).any():
        raise bad
    return int(counts) if counts.ndim == 0 else tuple(int(c) for c in counts)
