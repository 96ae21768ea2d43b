"""Indexed reads and writes (keras.ops names and signatures): slice, slice_update, scatter,
scatter_update, segment_sum, segment_max, top_k, sort, argsort, and the integer-valued
one_hot, multi_hot, in_top_k, nonzero, unique.

Writes return new tensors (the input is never changed). Gradients: a slice or top_k sends the
cotangent back to the positions it read; an update sends it to `updates` at the written
positions and to the input elsewhere; segment_max to the position of each maximum.
"""

import builtins

import numpy as np

from fkeras.engine.keras_tensor import KerasTensor
from fkeras.ops import shape_utils as su
from fkeras.ops.arrangement import _int_data
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import Op, apply


def _region(start, size):
    return tuple(builtins.slice(int(s), int(s) + int(n)) for s, n in zip(start, size))


class Slice(Op):
    name = "slice"

    def output_spec(self, x, start=(), size=()):
        return tuple(size)

    def forward(self, dev, x, start=(), size=()):
        if len(start) != x.ndim or len(size) != x.ndim:
            raise ValueError(f"`slice`: start_indices and shape need one entry per axis of "
                             f"the input (rank {x.ndim}); received {start} and {size}.")
        y = np.ascontiguousarray(x[_region(start, size)])
        if y.shape != tuple(size):
            raise ValueError(f"`slice`: the region start={start}, shape={size} does not fit "
                             f"in the input of shape {x.shape}.")
        return y, x.shape

    def backward(self, dev, shape, g, needs, start=(), size=()):
        dx = np.zeros(shape, g.dtype)
        dx[_region(start, size)] = g
        return (dx,)


class SliceUpdate(Op):
    name = "slice_update"

    def output_spec(self, x, updates, start=()):
        return su.shape_of(x)

    def forward(self, dev, x, updates, start=()):
        region = _region(start, updates.shape)
        y = x.copy()
        y[region] = updates
        return y, region

    def backward(self, dev, region, g, needs, start=()):
        dx = None
        if needs[0]:
            dx = g.copy()
            dx[region] = 0
        return dx, (np.ascontiguousarray(g[region]) if needs[1] else None)


def _index_tuple(indices):
    # (n, k) coordinates -> a k-tuple of index arrays for NumPy fancy indexing.
    idx = np.asarray(indices)
    return tuple(idx[..., i] for i in range(idx.shape[-1]))


class Scatter(Op):
    """zeros(shape) with `values` added at `indices` (duplicates sum)."""

    name = "scatter"

    def output_spec(self, indices, values, shape=()):
        return KerasTensor(tuple(shape), getattr(values, "dtype", "float32"))

    def forward(self, dev, indices, values, shape=()):
        y = np.zeros(shape, values.dtype)
        np.add.at(y, _index_tuple(indices), values)
        return y, indices

    def backward(self, dev, indices, g, needs, shape=()):
        return None, np.ascontiguousarray(g[_index_tuple(indices)])


class ScatterUpdate(Op):
    """`inputs` with the entries at `indices` replaced by (or combined with) `updates`.

    reduction None replaces (the last duplicate wins); "add", "mul", "max", "min" combine the
    input with every update at a coordinate, duplicates included (Keras 3.15's reductions)."""

    name = "scatter_update"

    def output_spec(self, x, indices, updates, reduction=None):
        return su.shape_of(x)

    def forward(self, dev, x, indices, updates, reduction=None):
        y = x.copy()
        idx = _index_tuple(indices)
        if reduction is None:
            y[idx] = updates
        else:
            _SCATTER_UFUNCS[reduction].at(y, idx, updates)
        return y, (x, indices, updates, y)

    def backward(self, dev, saved, g, needs, reduction=None):
        x, indices, updates, y = saved
        idx = _index_tuple(indices)
        dx = du = None
        if reduction is None:
            if needs[0]:
                dx = g.copy()
                dx[idx] = 0
            if needs[2]:
                du = np.ascontiguousarray(g[idx])
        elif reduction == "add":
            dx = g.copy() if needs[0] else None
            du = np.ascontiguousarray(g[idx]) if needs[2] else None
        elif reduction in ("max", "min"):
            # The cotangent goes to every operand equal to the result (ties each receive it).
            if needs[0]:
                dx = g * (x == y)
            if needs[2]:
                du = g[idx] * (updates == y[idx])
        else:  # "mul": d y / d x = prod(updates at the coordinate); d y / d u_i = y / u_i
            factor = np.ones_like(x)
            np.multiply.at(factor, idx, updates)
            if needs[0]:
                dx = g * factor
            if needs[2]:
                du = np.empty_like(updates)
                flat = np.asarray(indices).reshape(len(updates), -1)
                for i in range(len(updates)):
                    others = x[tuple(flat[i])].copy()
                    for j in range(len(updates)):
                        if j != i and np.array_equal(flat[j], flat[i]):
                            others = others * updates[j]
                    du[i] = g[tuple(flat[i])] * others
        return dx, None, du


_SCATTER_UFUNCS = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


class SegmentSum(Op):
    name = "segment_sum"

    def output_spec(self, data, ids, num_segments=None):
        shape = su.shape_of(data)
        return (num_segments,) + tuple(shape[1:])

    def forward(self, dev, data, ids, num_segments=None):
        n = int(num_segments if num_segments is not None else (ids.max() + 1 if ids.size else 0))
        y = np.zeros((n,) + data.shape[1:], data.dtype)
        keep = (ids >= 0) & (ids < n)
        np.add.at(y, ids[keep], data[keep])
        return y, (ids, keep)

    def backward(self, dev, saved, g, needs, num_segments=None):
        ids, keep = saved
        dx = np.zeros((ids.shape[0],) + g.shape[1:], g.dtype)
        dx[keep] = g[ids[keep]]
        return dx, None


class SegmentMax(SegmentSum):
    name = "segment_max"

    def forward(self, dev, data, ids, num_segments=None):
        n = int(num_segments if num_segments is not None else (ids.max() + 1 if ids.size else 0))
        # Empty segments hold -inf (the lowest integer for integer data), as Keras does.
        low = -np.inf if data.dtype.kind == "f" else np.iinfo(data.dtype).min
        y = np.full((n,) + data.shape[1:], low, data.dtype)
        keep = (ids >= 0) & (ids < n)
        np.maximum.at(y, ids[keep], data[keep])
        return y, (data, ids, keep, y)

    def backward(self, dev, saved, g, needs, num_segments=None):
        data, ids, keep, y = saved
        dx = np.zeros(data.shape, g.dtype)
        hit = np.zeros(data.shape, bool)
        hit[keep] = data[keep] == y[ids[keep]]
        counts = np.zeros(y.shape, g.dtype)
        np.add.at(counts, ids[keep], hit[keep])
        dx[keep] = np.where(hit[keep], g[ids[keep]] / np.maximum(counts[ids[keep]], 1), 0)
        return dx, None


class TopK(Op):
    name = "top_k"
    n_outputs = 2

    def output_spec(self, x, k=1, sorted=True):
        shape = su.shape_of(x)[:-1] + (k,)
        return [KerasTensor(shape, getattr(x, "dtype", "float32")), KerasTensor(shape, "int32")]

    def forward(self, dev, x, k=1, sorted=True):
        if k > x.shape[-1]:
            raise ValueError(f"`top_k`: k={k} is larger than the last axis of x ({x.shape}).")
        # Stable descending order: ties keep the lower index first (torch/jax).
        idx = np.argsort(-x, axis=-1, kind="stable")[..., :k].astype(np.int32)
        vals = np.take_along_axis(x, idx, axis=-1)
        return (vals, idx), (x.shape, idx)

    def backward(self, dev, saved, grads, needs, k=1, sorted=True):
        shape, idx = saved
        dx = np.zeros(shape, grads[0].dtype)
        np.put_along_axis(dx, idx.astype(np.int64), grads[0], axis=-1)
        return (dx,)


class Sort(Op):
    name = "sort"

    def output_spec(self, x, axis=-1):
        return su.shape_of(x)

    def forward(self, dev, x, axis=-1):
        idx = np.argsort(x, axis=axis, kind="stable")
        return np.take_along_axis(x, idx, axis=axis), idx

    def backward(self, dev, idx, g, needs, axis=-1):
        dx = np.zeros(idx.shape, g.dtype)
        np.put_along_axis(dx, idx, g, axis=axis)
        return (dx,)


class _IntegerOp(Op):
    differentiable = False
    out_dtype = "int32"

    def output_spec(self, x, **attrs):
        return KerasTensor(su.shape_of(x), self.out_dtype)


class ArgSort(_IntegerOp):
    name = "argsort"

    def forward(self, dev, x, axis=-1):
        return np.argsort(x, axis=axis, kind="stable").astype(np.int32), None


class OneHot(_IntegerOp):
    name = "one_hot"

    def output_spec(self, x, num_classes=1, axis=-1, dtype="float32"):
        shape = list(su.shape_of(x))
        shape.insert(len(shape) + 1 + axis if axis < 0 else axis, num_classes)
        return KerasTensor(tuple(shape), dtype)

    def forward(self, dev, x, num_classes=1, axis=-1, dtype="float32"):
        x = np.asarray(x).astype(np.int64)
        y = (x[..., None] == np.arange(num_classes)).astype(dtype)  # -1 / out of range: zeros
        return np.ascontiguousarray(np.moveaxis(y, -1, axis)), None


class InTopK(_IntegerOp):
    name = "in_top_k"
    out_dtype = "bool"

    def output_spec(self, targets, predictions, k=1):
        return KerasTensor(su.shape_of(targets), "bool")

    def forward(self, dev, targets, predictions, k=1):
        t = np.asarray(targets).astype(np.int64)
        target_vals = np.take_along_axis(predictions, t[:, None], axis=-1)
        # Ties count in the target's favour (Keras 3's torch/jax behaviour).
        rank = np.sum(predictions > target_vals, axis=-1)
        return rank < k, None


def _float_dtype(dtype):
    from fkeras.ops.creation import _np_dtype

    return _np_dtype(dtype).name


def slice(inputs, start_indices, shape):  # noqa: A001
    """The block of `inputs` of `shape` starting at `start_indices` (keras.ops.slice)."""
    start = tuple(int(s) for s in np.asarray(getattr(start_indices, "_value", start_indices)))
    return apply(_R["slice"], inputs, start=start, size=tuple(int(d) for d in shape))


def slice_update(inputs, start_indices, updates):
    """`inputs` with the block at `start_indices` replaced by `updates` (a new tensor)."""
    start = tuple(int(s) for s in np.asarray(getattr(start_indices, "_value", start_indices)))
    from fkeras.ops.dtypes import promote

    inputs, updates = promote(inputs, updates)
    return apply(_R["slice_update"], inputs, updates, start=start)


def scatter(indices, values, shape):
    """zeros(shape) with `values` added at the coordinates `indices` (shape (n, rank))."""
    from fkeras.ops.core import convert_to_tensor

    if not hasattr(values, "shape"):
        values = convert_to_tensor(values)
    return apply(_R["scatter"], _int_data(indices), values,
                 shape=tuple(int(d) for d in shape))


def scatter_update(inputs, indices, updates, reduction=None):
    """`inputs` with `updates` written at the coordinates `indices` (a new tensor).

    Args:
        inputs: the tensor to update.
        indices: (n, k) integer coordinates into the first k axes of `inputs`.
        updates: (n, *inputs.shape[k:]) values.
        reduction: None replaces the entries; "add", "mul", "max" or "min" combines each
            entry with all the updates written to it (Keras 3.15).

    Example:
    ```python
    y = fkeras.ops.scatter_update(np.zeros(4), [[1], [1]], [2.0, 3.0], reduction="add")
    # y == [0, 5, 0, 0]
    ```
    """
    from fkeras.ops.dtypes import promote

    if reduction is not None and reduction not in _SCATTER_UFUNCS:
        raise ValueError(f"Unsupported reduction: {reduction}. `scatter_update` accepts "
                         "reduction=None, 'add', 'mul', 'max' or 'min'.")
    inputs, updates = promote(inputs, updates)
    return apply(_R["scatter_update"], inputs, _int_data(indices), updates, reduction=reduction)


def segment_sum(data, segment_ids, num_segments=None, sorted=False):
    """Sums of the rows of `data` per segment id (keras.ops.segment_sum)."""
    return apply(_R["segment_sum"], data, _int_data(segment_ids),
                 num_segments=None if num_segments is None else int(num_segments))


def segment_max(data, segment_ids, num_segments=None, sorted=False):
    """Maxima of the rows of `data` per segment id (keras.ops.segment_max)."""
    return apply(_R["segment_max"], data, _int_data(segment_ids),
                 num_segments=None if num_segments is None else int(num_segments))


def top_k(x, k, sorted=True):
    """The `k` largest values of `x` along the last axis and their int32 indices."""
    return tuple(apply(_R["top_k"], x, k=int(k), sorted=bool(sorted)))


def sort(x, axis=-1):
    """`x` sorted in ascending order along `axis` (keras.ops.sort); differentiable."""
    return apply(_R["sort"], x, axis=axis)


def argsort(x, axis=-1):
    """The int32 indices that sort `x` along `axis` (stable) (keras.ops.argsort)."""
    return apply(_R["argsort"], x, axis=axis)


def one_hot(x, num_classes, axis=-1, dtype=None, sparse=False):
    """Integer labels `x` as one-hot vectors along a new `axis` (keras.ops.one_hot)."""
    if sparse:
        raise ValueError("`one_hot`: fkeras has no sparse tensors; use sparse=False.")
    return apply(_R["one_hot"], _int_data(x), num_classes=int(num_classes), axis=int(axis),
                 dtype=_float_dtype(dtype))


def multi_hot(inputs, num_classes=None, axis=-1, dtype=None, sparse=False, **kwargs):
    """The union of the one-hot vectors of each row of integer labels (keras.ops.multi_hot)."""
    from fkeras.ops.math import max as _max

    num_classes = kwargs.pop("num_tokens", num_classes)
    hot = one_hot(inputs, num_classes, axis=axis, dtype=dtype, sparse=sparse)
    reduce_axis = -2 if axis == -1 else (axis + 1 if axis >= 0 else axis)
    if len(su.shape_of(inputs)) == 1:
        reduce_axis = 0
    return _max(hot, axis=reduce_axis)


def in_top_k(targets, predictions, k):
    """Whether each target is among the `k` largest predictions of its row (bool)."""
    return apply(_R["in_top_k"], _int_data(targets), predictions, k=int(k))


def nonzero(x):
    """The indices of the nonzero elements of `x`, one int32 tensor per axis (a tuple)."""
    from fkeras.ops.core import convert_to_tensor

    if isinstance(x, KerasTensor):
        raise ValueError("`nonzero` has a data-dependent output shape: it needs an eager "
                         "tensor, not a KerasTensor.")
    arr = np.asarray(getattr(x, "_value", x))
    return tuple(convert_to_tensor(i.astype(np.int32)) for i in np.nonzero(arr))


def unique(x, sorted=True, return_index=False, return_inverse=False, return_counts=False,
           axis=None, size=None, fill_value=None):
    """The unique values of `x` (sorted), optionally with the inverse indices and counts.

    Not differentiable; the output shape depends on the data, so KerasTensors are refused
    unless `size` is given."""
    from fkeras.ops.core import convert_to_tensor

    if isinstance(x, KerasTensor):
        raise ValueError("`unique` has a data-dependent output shape: it needs an eager "
                         "tensor, not a KerasTensor.")
    arr = np.asarray(getattr(x, "_value", x))
    values, index, inverse, counts = np.unique(arr, return_index=True, return_inverse=True,
                                               return_counts=True, axis=axis)
    if size is not None:
        pad = int(size) - values.shape[0]
        fill = values.min() if fill_value is None and values.size else (fill_value or 0)
        values = np.concatenate([values[:size], np.full(max(pad, 0), fill, values.dtype)])
        counts = np.concatenate([counts[:size], np.zeros(max(pad, 0), counts.dtype)])
    out = [convert_to_tensor(values)]
    if return_index:
        out.append(convert_to_tensor(index.astype(np.int32)))
    if return_inverse:
        out.append(convert_to_tensor(inverse.reshape(arr.shape if axis is None else -1)
                                     .astype(np.int32)))
    if return_counts:
        out.append(convert_to_tensor(counts.astype(np.int32)))
    return out[0] if len(out) == 1 else tuple(out)


class SegmentMin(SegmentMax):
    name = "segment_min"

    def forward(self, dev, data, ids, num_segments=None):
        y, saved = SegmentMax.forward(self, dev, -data, ids, num_segments)
        return -y, (data, ids, saved[2], -y)


def segment_min(data, segment_ids, num_segments=None, sorted=False):
    """Minima of the rows of `data` per segment id (keras.ops.segment_min); empty segments
    hold +inf."""
    return apply(_R["segment_min"], data, _int_data(segment_ids),
                 num_segments=None if num_segments is None else int(num_segments))


def searchsorted(sorted_sequence, values, side="left"):
    """Indices where `values` would be inserted to keep the 1-D `sorted_sequence` sorted
    (keras.ops.searchsorted); int32, not differentiable."""
    from fkeras.ops.core import convert_to_tensor

    if side not in ("left", "right"):
        raise ValueError(f"`side` must be 'left' or 'right'; received {side!r}.")
    seq = np.asarray(getattr(sorted_sequence, "_value", sorted_sequence))
    if seq.ndim != 1:
        raise ValueError(f"`searchsorted` needs a 1-D sorted sequence; received shape "
                         f"{seq.shape}.")
    vals = np.asarray(getattr(values, "_value", values))
    return convert_to_tensor(np.searchsorted(seq, vals, side=side).astype(np.int32))


def digitize(x, bins):
    """The index of the bin of each element of `x` (keras.ops.digitize); int32."""
    from fkeras.ops.core import convert_to_tensor

    arr = np.asarray(getattr(x, "_value", x))
    edges = np.asarray(getattr(bins, "_value", bins))
    return convert_to_tensor(np.digitize(arr, edges).astype(np.int32))


def select(condlist, choicelist, default=0):
    """Elements from `choicelist[i]` where `condlist[i]` first holds, else `default`
    (keras.ops.select); differentiable in the choices."""
    from fkeras.ops.math import where

    if len(condlist) != len(choicelist):
        raise ValueError("`condlist` and `choicelist` must have the same length; received "
                         f"{len(condlist)} and {len(choicelist)}.")
    out = default
    for cond, choice in zip(reversed(condlist), reversed(choicelist)):
        out = where(cond, choice, out)
    return out


def unravel_index(indices, shape):
    """The coordinates (a tuple of int tensors) of flat `indices` in an array of `shape`."""
    from fkeras.ops.core import convert_to_tensor

    idx = np.asarray(getattr(indices, "_value", indices))
    return tuple(convert_to_tensor(c.astype(np.int32))
                 for c in np.unravel_index(idx, tuple(int(d) for d in shape)))


def argpartition(x, kth, axis=-1):
    """Indices that partition `x` around its `kth` element along `axis`
    (keras.ops.argpartition); int32, not differentiable."""
    from fkeras.ops.core import convert_to_tensor

    arr = np.asarray(getattr(x, "_value", x))
    return convert_to_tensor(np.argpartition(arr, kth, axis=axis).astype(np.int32))


def segment_prod(data, segment_ids, num_segments=None, sorted=False):
    """Products of the rows of `data` per segment id, 1 for empty segments
    (keras.ops.segment_prod); differentiable in `data`."""
    from fkeras.ops.arrangement import stack, take
    from fkeras.ops.creation import ones
    from fkeras.ops.reductions import prod

    ids = np.asarray(getattr(segment_ids, "_value", segment_ids)).astype(np.int64)
    n = int(num_segments) if num_segments is not None else (int(ids.max()) + 1 if ids.size else 0)
    rows = []
    for s in range(n):
        members = np.nonzero(ids == s)[0]
        if members.size:
            rows.append(prod(take(data, members, axis=0), axis=0))
        else:
            rows.append(ones(su.shape_of(data)[1:], dtype=getattr(data, "dtype", None)))
    return stack(rows)
