"""Ops that rearrange elements (keras.ops names and signatures): tile, flip, roll,
broadcast_to, swapaxes, moveaxis, ravel, take, take_along_axis, diagonal, tril, triu; and
stack, unstack, split, hstack, vstack built from them and from concatenate.

A rearrangement moves or copies elements without arithmetic, so one op class serves them all
(`_Rearrange`): the forward is the NumPy function on the values; the backward runs the same
function on the element indices `arange(x.size)` and sums the cotangent back onto the source
indices (`bincount`), which is exact for gathers that repeat elements (tile, broadcast_to,
take). Symbolic shapes come from running the function on a zero-strided probe twice (unknown
dimensions as 2 and 3): a dimension that differs between the two probes stays None.
"""

import numpy as np

from fkeras.backend import devices as _devices
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.ops import shape_utils as su
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import Op, apply, in_symbolic_call


def _probe(x, fill):
    shape = tuple(fill if d is None else d for d in su.shape_of(x))
    dtype = getattr(x, "dtype", "float32")
    return np.broadcast_to(np.zeros((), dtype), shape)


class _Rearrange(Op):
    """y = fn(x, *index_args, **attrs); index_args are integer data (no gradient)."""

    fn = None

    def output_spec(self, x, *rest, **attrs):
        fn = type(self).fn
        a = fn(_probe(x, 2), *[_probe(r, 2) if isinstance(r, KerasTensor) else r
                               for r in rest], **attrs)
        b = fn(_probe(x, 3), *[_probe(r, 3) if isinstance(r, KerasTensor) else r
                               for r in rest], **attrs)
        shape = tuple(p if p == q else None for p, q in zip(a.shape, b.shape))
        return KerasTensor(shape, getattr(x, "dtype", "float32"))

    def forward(self, dev, x, *rest, **attrs):
        y = np.ascontiguousarray(type(self).fn(x, *rest, **attrs))
        return y, (x.shape, rest)

    def backward(self, dev, saved, g, needs, **attrs):
        shape, rest = saved
        size = int(np.prod(shape))
        idx = type(self).fn(np.arange(size).reshape(shape), *rest, **attrs)
        dx = np.bincount(np.ravel(idx), weights=np.ravel(g), minlength=size)
        return (dx.astype(g.dtype, copy=False).reshape(shape),) + (None,) * len(rest)


def _define(name, fn):
    return type("".join(p.title() for p in name.split("_")), (_Rearrange,),
                {"name": name, "fn": staticmethod(fn)})


class BroadcastTo(_Rearrange):
    """Symbolically the output has the target shape as given, None where it is unknown (a
    batch size read with `ops.shape` inside a layer's symbolic call), as in Keras 3."""

    name = "broadcast_to"
    fn = staticmethod(lambda x, shape=(): np.broadcast_to(x, shape))

    def output_spec(self, x, shape=()):
        x_shape = su.shape_of(x)
        lead = len(shape) - len(x_shape)
        bad = lead < 0 or any(
            d not in (1, None) and t is not None and d != t
            for d, t in zip(x_shape, shape[max(lead, 0):]))
        if bad:
            raise ValueError(f"broadcast_to: cannot broadcast an input of shape {x_shape} "
                             f"to the shape {tuple(shape)}.")
        return KerasTensor(tuple(shape), getattr(x, "dtype", "float32"))


def _take(x, indices, axis=None):
    if axis is None:
        return np.take(np.ravel(x), indices)
    return np.take(x, indices, axis=axis)


_define("tile", lambda x, repeats=(): np.tile(x, repeats))
_define("flip", lambda x, axis=None: np.flip(x, axis))
_define("roll", lambda x, shift=0, axis=None: np.roll(x, shift, axis))
_define("swapaxes", lambda x, axis1=0, axis2=1: np.swapaxes(x, axis1, axis2))
_define("moveaxis", lambda x, source=0, destination=0: np.moveaxis(x, source, destination))
_define("ravel", lambda x: np.ravel(x))
_define("take", _take)
_define("take_along_axis", lambda x, indices, axis=None: np.take_along_axis(
    np.ravel(x) if axis is None else x, indices, axis=-1 if axis is None else axis))
_define("diagonal", lambda x, offset=0, axis1=0, axis2=1: np.diagonal(x, offset, axis1, axis2))


class _Masked(Op):
    """A linear op that zeroes a fixed pattern: its own adjoint."""

    fn = None

    def output_spec(self, x, **attrs):
        return su.shape_of(x)

    def forward(self, dev, x, **attrs):
        return type(self).fn(x, **attrs), None

    def backward(self, dev, saved, g, needs, **attrs):
        return (type(self).fn(g, **attrs),)


class Tril(_Masked):
    name = "tril"
    fn = staticmethod(lambda x, k=0: np.tril(x, k))


class Triu(_Masked):
    name = "triu"
    fn = staticmethod(lambda x, k=0: np.triu(x, k))


def _int_data(indices):
    buf = getattr(indices, "_value", None)
    if buf is not None:
        indices = buf
    if isinstance(indices, KerasTensor):
        return indices
    arr = _devices.host_array(indices)
    if arr.dtype.kind not in "iu":
        if arr.size and not np.all(np.mod(arr, 1) == 0):
            raise ValueError(f"Indices must be integers; received {indices!r}.")
        arr = arr.astype(np.int64)
    return arr


def tile(x, repeats):
    """`x` repeated `repeats` times along each axis (keras.ops.tile)."""
    reps = (int(repeats),) if np.ndim(repeats) == 0 else tuple(int(r) for r in repeats)
    return apply(_R["tile"], x, repeats=reps)


def flip(x, axis=None):
    """`x` with the order of elements along `axis` (all axes when None) reversed."""
    return apply(_R["flip"], x, axis=tuple(axis) if isinstance(axis, list) else axis)


def roll(x, shift, axis=None):
    """Elements of `x` shifted by `shift` along `axis`, wrapping around (keras.ops.roll)."""
    shift = tuple(shift) if isinstance(shift, list) else shift
    return apply(_R["roll"], x, shift=shift, axis=tuple(axis) if isinstance(axis, list) else axis)


def broadcast_to(x, shape):
    """`x` broadcast to `shape` (keras.ops.broadcast_to). On a KerasTensor, a None in
    `shape` (an unknown batch size) stays unknown in the output; so it does for a concrete
    `x` inside a layer's symbolic call (where Keras traces with stand-in sizes)."""
    shape = tuple(None if d is None else int(d) for d in shape)
    if None in shape and not isinstance(x, KerasTensor):
        if in_symbolic_call():
            return _R["broadcast_to"].output_spec(x, shape=shape)
        raise ValueError(f"broadcast_to: `shape` has an unknown (None) dimension: {shape}. "
                         "A concrete tensor needs a fully known target shape.")
    return apply(_R["broadcast_to"], x, shape=shape)


def swapaxes(x, axis1, axis2):
    """`x` with axes `axis1` and `axis2` exchanged (keras.ops.swapaxes)."""
    return apply(_R["swapaxes"], x, axis1=int(axis1), axis2=int(axis2))


def moveaxis(x, source, destination):
    """`x` with axes moved from `source` to `destination` (keras.ops.moveaxis)."""
    source = tuple(source) if isinstance(source, (list, tuple)) else int(source)
    destination = (tuple(destination) if isinstance(destination, (list, tuple))
                   else int(destination))
    return apply(_R["moveaxis"], x, source=source, destination=destination)


def ravel(x):
    """`x` flattened to one axis (keras.ops.ravel)."""
    return apply(_R["ravel"], x)


def take(x, indices, axis=None):
    """Elements of `x` at integer `indices` along `axis` (the flattened x when None)."""
    return apply(_R["take"], x, _int_data(indices), axis=axis)


def take_along_axis(x, indices, axis=None):
    """Elements of `x` picked by `indices` of the same rank along `axis`."""
    return apply(_R["take_along_axis"], x, _int_data(indices), axis=axis)


def diagonal(x, offset=0, axis1=0, axis2=1):
    """The `offset` diagonal of `x` over axes `axis1`, `axis2` (keras.ops.diagonal)."""
    return apply(_R["diagonal"], x, offset=int(offset), axis1=int(axis1), axis2=int(axis2))


def tril(x, k=0):
    """`x` with the elements above the k-th diagonal zeroed (keras.ops.tril)."""
    return apply(_R["tril"], x, k=int(k))


def triu(x, k=0):
    """`x` with the elements below the k-th diagonal zeroed (keras.ops.triu)."""
    return apply(_R["triu"], x, k=int(k))


def stack(x, axis=0):
    """Tensors of one shape joined along a new `axis` (keras.ops.stack)."""
    from fkeras.ops.reshape_ops import concatenate, expand_dims

    xs = list(x)
    if not xs:
        raise ValueError("`stack` needs at least one tensor; received an empty sequence.")
    shapes = {tuple(su.shape_of(t)) for t in xs}
    if len(shapes) > 1 and not any(isinstance(t, KerasTensor) for t in xs):
        raise ValueError(f"`stack` needs tensors of one shape; received shapes {sorted(shapes)}.")
    return concatenate([expand_dims(t, axis) for t in xs], axis=axis)


def unstack(x, num=None, axis=0):
    """The slices of `x` along `axis`, as a list (keras.ops.unstack)."""
    from fkeras.ops.reshape_ops import getitem

    shape = su.shape_of(x)
    ax = su.normalize_axis(axis, len(shape), "unstack")
    n = shape[ax] if num is None else num
    if n is None:
        raise ValueError("`unstack` needs a known size along `axis` (or `num`).")
    lead = (slice(None),) * ax
    return [getitem(x, lead + (i,)) for i in range(n)]


def split(x, indices_or_sections, axis=0):
    """`x` cut along `axis` into equal sections or at the given indices (keras.ops.split)."""
    from fkeras.ops.reshape_ops import getitem

    shape = su.shape_of(x)
    ax = su.normalize_axis(axis, len(shape), "split")
    size = shape[ax]
    if np.ndim(indices_or_sections) == 0:
        n = int(indices_or_sections)
        if size is None or n <= 0 or size % n:
            raise ValueError(f"`split`: axis {axis} of size {size} cannot be split into "
                             f"{indices_or_sections} equal sections.")
        bounds = [i * (size // n) for i in range(n + 1)]
    else:
        bounds = [0] + [int(i) for i in indices_or_sections] + [size]
    lead = (slice(None),) * ax
    return [getitem(x, lead + (slice(a, b),)) for a, b in zip(bounds[:-1], bounds[1:])]


def array_split(x, indices_or_sections, axis=0):
    """`split` that allows sections of unequal size (keras.ops.array_split)."""
    shape = su.shape_of(x)
    size = shape[su.normalize_axis(axis, len(shape), "array_split")]
    n = int(indices_or_sections)
    q, r = divmod(size, n)
    cuts = np.cumsum([q + 1 if i < r else q for i in range(n)])[:-1]
    return split(x, [int(c) for c in cuts], axis=axis)


def hstack(xs):
    """Tensors joined along axis 1 (axis 0 for 1-D ones) (keras.ops.hstack)."""
    from fkeras.ops.reshape_ops import concatenate

    xs = list(xs)
    return concatenate(xs, axis=0 if len(su.shape_of(xs[0])) == 1 else 1)


def vstack(xs):
    """Tensors joined along axis 0, 1-D ones as rows (keras.ops.vstack)."""
    from fkeras.ops.reshape_ops import concatenate, reshape

    xs = [reshape(t, (1, -1)) if len(su.shape_of(t)) == 1 else t for t in xs]
    return concatenate(xs, axis=0)


_define("rot90", lambda x, k=1, axes=(0, 1): np.rot90(x, k, axes))
_define("diag", lambda x, k=0: np.diag(x, k) if np.ndim(x) == 2 else np.diag(np.ravel(x), k))


def fliplr(x):
    """`x` reversed along axis 1 (keras.ops.fliplr)."""
    return flip(x, 1)


def flipud(x):
    """`x` reversed along axis 0 (keras.ops.flipud)."""
    return flip(x, 0)


def rot90(array, k=1, axes=(0, 1)):
    """`array` rotated by 90 degrees `k` times in the plane of `axes` (keras.ops.rot90)."""
    return apply(_R["rot90"], array, k=int(k), axes=tuple(int(a) for a in axes))


def diag(x, k=0):
    """The k-th diagonal of a 2-D `x`, or a 2-D matrix with 1-D `x` on it (keras.ops.diag)."""
    if len(su.shape_of(x)) not in (1, 2):
        raise ValueError(f"`diag` needs a 1-D or 2-D input; received shape {su.shape_of(x)}.")
    return apply(_R["diag"], x, k=int(k))


def diagflat(x, k=0):
    """A 2-D matrix with the flattened `x` on its k-th diagonal (keras.ops.diagflat)."""
    return apply(_R["diag"], ravel(x), k=int(k))


def hsplit(x, indices_or_sections):
    """`split` along axis 1 (axis 0 for 1-D inputs) (keras.ops.hsplit)."""
    return split(x, indices_or_sections, axis=0 if len(su.shape_of(x)) == 1 else 1)


def vsplit(x, indices_or_sections):
    """`split` along axis 0 (keras.ops.vsplit)."""
    return split(x, indices_or_sections, axis=0)


def dsplit(x, indices_or_sections):
    """`split` along axis 2 (keras.ops.dsplit)."""
    return split(x, indices_or_sections, axis=2)


def dstack(xs):
    """Tensors joined along axis 2, lower ranks promoted to 3-D first (keras.ops.dstack)."""
    from fkeras.ops.reshape_ops import concatenate, reshape

    out = []
    for t in xs:
        shape = su.shape_of(t)
        if len(shape) == 0:
            t = reshape(t, (1, 1, 1))
        elif len(shape) == 1:
            t = reshape(t, (1, shape[0], 1))
        elif len(shape) == 2:
            t = reshape(t, tuple(shape) + (1,))
        out.append(t)
    return concatenate(out, axis=2)


def append(x1, x2, axis=None):
    """x2 appended to x1 along `axis` (both flattened when None) (keras.ops.append)."""
    from fkeras.ops.dtypes import promote
    from fkeras.ops.reshape_ops import concatenate

    x1, x2 = promote(x1, x2)
    if axis is None:
        return concatenate([ravel(x1), ravel(x2)], axis=0)
    return concatenate([x1, x2], axis=axis)


def copy(x):
    """A copy of `x` (keras.ops.copy); differentiable (the identity)."""
    from fkeras.ops.math import multiply

    return multiply(x, 1)


def get_item(x, key):
    """x[key] (keras.ops.get_item)."""
    from fkeras.ops.reshape_ops import getitem

    return getitem(x, key)


def repeat_heads(x, n):
    """Each head of x (B, S, K, H) repeated n times along axis 2 (grouped-query attention)."""
    from fkeras.ops.reshape_ops import repeat

    return x if n == 1 else repeat(x, n, axis=2)


def extract_sequences(x, sequence_length, sequence_stride):
    """Frames of `sequence_length` along the last axis every `sequence_stride`
    (keras.ops.extract_sequences): shape (..., num_frames, sequence_length)."""
    from fkeras.ops.reshape_ops import getitem

    n = su.shape_of(x)[-1]
    length, stride = int(sequence_length), int(sequence_stride)
    frames = [getitem(x, (Ellipsis, slice(s, s + length)))
              for s in range(0, n - length + 1, stride)]
    return stack(frames, axis=-2)
