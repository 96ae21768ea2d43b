"""Shape helpers shared by ops: broadcasting, axis normalization, reductions of gradients."""

import numpy as np


def broadcast_shapes(a, b, op_name):
    """NumPy broadcasting over shapes that may hold None (unknown)."""
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None or y is None:
            out.append(x if y is None else y)
        elif x == y:
            out.append(x)
        else:
            raise ValueError(
                f"Cannot broadcast shapes {tuple(a)} and {tuple(b)} in `{op_name}`."
            )
    return tuple(reversed(out))


def same_rank_shapes(a, b, expand_rank_1=True):
    """Keras's squeeze_or_expand_to_same_rank on two shapes: where the ranks differ by one and
    the longer shape ends in 1, that 1 is dropped, or (`expand_rank_1`, the shorter shape of
    rank 1) a trailing 1 is added to the shorter one. Returns the two shapes."""
    a, b = tuple(a), tuple(b)
    if len(a) == len(b) + 1 and a[-1] == 1:
        if len(b) == 1 and expand_rank_1:
            b = b + (1,)
        else:
            a = a[:-1]
    elif len(b) == len(a) + 1 and b[-1] == 1:
        if len(a) == 1 and expand_rank_1:
            a = a + (1,)
        else:
            b = b[:-1]
    return a, b


def unbroadcast(g, shape, xp=None):
    """Sums a broadcast gradient back to `shape` (`xp`: the device's array namespace for a
    device buffer; None or NumPy: g's own `sum`)."""
    if g.shape == tuple(shape):
        return g
    native = xp is None or xp is np
    extra = g.ndim - len(shape)
    if extra:
        lead = tuple(range(extra))
        g = g.sum(axis=lead) if native else xp.sum(g, axis=lead)
    axes = tuple(i for i, d in enumerate(shape) if d == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True) if native else xp.sum(g, axis=axes, keepdims=True)
    return g.reshape(shape)


def normalize_axis(axis, ndim, op_name="op"):
    if not -ndim <= axis < ndim:
        raise ValueError(f"Invalid axis {axis} for `{op_name}` on a tensor of rank {ndim}.")
    return axis % ndim


def normalize_axes(axis, ndim, op_name="op"):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (list, tuple)):
        return tuple(sorted(normalize_axis(a, ndim, op_name) for a in axis))
    return (normalize_axis(axis, ndim, op_name),)


def reduced_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def shape_of(x):
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)
