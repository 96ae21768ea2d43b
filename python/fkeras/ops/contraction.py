"""Tensor contractions (keras.ops names and signatures): einsum, tensordot, dot, inner, outer,
vdot, trace, norm.

`einsum` runs as a chain of existing ops, so its gradient comes from theirs: operands are
contracted pairwise; each pair is transposed to (batch, free, contracted) and reshaped to a
3-D (or 2-D) `matmul`, which reaches the GEMM kernel when there is no batch axis. Axes that only
one operand has and the output drops are summed first. `tensordot`, `dot`, `inner` write their
subscripts and call `einsum`; `norm` is built from abs, power and reductions.
"""

import string

import numpy as np

from fkeras.ops import shape_utils as su
from fkeras.ops import math as _m
from fkeras.ops import reshape_ops as _r

_LETTERS = string.ascii_letters


def _parse(subscripts, shapes):
    """Explicit per-operand letter lists and output letters (ellipsis expanded)."""
    spec = subscripts.replace(" ", "")
    ins, arrow, out = spec.partition("->")
    terms = ins.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"`einsum`: the subscripts {subscripts!r} name {len(terms)} operands "
                         f"but {len(shapes)} were given.")
    used = set(spec) - set(".,->")
    spare = [c for c in _LETTERS if c not in used]
    n_ell = max((len(s) - (len(t) - 3) for t, s in zip(terms, shapes) if "..." in t), default=0)
    ell = spare[:n_ell]
    letters = []
    for t, s in zip(terms, shapes):
        if "..." in t:
            head, _, tail = t.partition("...")
            k = len(s) - len(head) - len(tail)
            t_letters = list(head) + ell[n_ell - k:] + list(tail)
        else:
            t_letters = list(t)
        if len(t_letters) != len(s):
            raise ValueError(f"`einsum`: subscripts {t!r} do not match an operand of shape "
                             f"{tuple(s)}.")
        if len(set(t_letters)) != len(t_letters):
            raise ValueError(f"`einsum`: repeated subscripts within one operand ({t!r}) are "
                             "not supported by fkeras; take a diagonal first.")
        letters.append(t_letters)
    if arrow:
        out_letters = list(out.replace("...", "".join(ell)))
    else:
        counts = {}
        for t in letters:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out_letters = ell + sorted(c for c, n in counts.items() if n == 1 and c not in ell)
    return letters, out_letters


def _sum_out(x, letters, keep):
    axes = [i for i, c in enumerate(letters) if c not in keep]
    if axes:
        x = _m.sum(x, axis=tuple(axes))
        letters = [c for c in letters if c in keep]
    return x, letters


def _dims(x, letters):
    return dict(zip(letters, su.shape_of(x)))


def _prod(dims):
    n = 1
    for d in dims:
        if d is None:
            return None  # an unknown (batch) dimension of a KerasTensor
        n *= d
    return n


def _reshape(x, shape):
    shape = [-1 if d is None else d for d in shape]
    if shape.count(-1) > 1:
        raise ValueError("`einsum` on KerasTensors supports one unknown dimension per group of "
                         f"merged axes; received shape {tuple(su.shape_of(x))}.")
    return _r.reshape(x, shape)


def _contract(a, la, b, lb, keep):
    """a and b contracted over their shared letters not in `keep`."""
    a, la = _sum_out(a, la, keep | set(lb))
    b, lb = _sum_out(b, lb, keep | set(la))
    batch = [c for c in la if c in lb and c in keep]
    summed = [c for c in la if c in lb and c not in keep]
    a_free = [c for c in la if c not in lb]
    b_free = [c for c in lb if c not in la]
    da, db = _dims(a, la), _dims(b, lb)
    for c in batch + summed:
        if da[c] != db[c] and None not in (da[c], db[c]):
            raise ValueError(f"`einsum`: dimension {c!r} has size {da[c]} in one operand and "
                             f"{db[c]} in the other.")
    at = _r.transpose(a, [la.index(c) for c in batch + a_free + summed])
    bt = _r.transpose(b, [lb.index(c) for c in batch + summed + b_free])
    nb, m, k, n = (_prod(da[c] for c in batch), _prod(da[c] for c in a_free),
                   _prod(da[c] for c in summed), _prod(db[c] for c in b_free))
    if batch:
        y = _m.matmul(_reshape(at, (nb, m, k)), _reshape(bt, (nb, k, n)))
    else:
        y = _m.matmul(_reshape(at, (m, k)), _reshape(bt, (k, n)))
    shape = [da[c] for c in batch + a_free] + [db[c] for c in b_free]
    return _reshape(y, shape), batch + a_free + b_free


def einsum(subscripts, *operands, **kwargs):
    """Einstein summation over `operands` as given by `subscripts` (keras.ops.einsum).

    Example:
    ```python
    y = fkeras.ops.einsum("bij,bjk->bik", a, b)   # a batched matmul
    ```
    """
    from fkeras.ops.dtypes import promote

    ops_ = list(operands)
    if len(ops_) == 2:
        ops_ = list(promote(*ops_))
    shapes = [su.shape_of(x) for x in ops_]
    letters, out = _parse(subscripts, shapes)
    x, lx = ops_[0], letters[0]
    for i in range(1, len(ops_)):
        keep = set(out).union(*[set(t) for t in letters[i + 1:]])
        x, lx = _contract(x, lx, ops_[i], letters[i], keep)
    x, lx = _sum_out(x, lx, set(out))
    if lx != out:
        x = _r.transpose(x, [lx.index(c) for c in out])
    return x


def tensordot(x1, x2, axes=2):
    """Sum of products over `axes` of x1 and x2 (keras.ops.tensordot)."""
    r1, r2 = len(su.shape_of(x1)), len(su.shape_of(x2))
    if isinstance(axes, (int, np.integer)):
        a1, a2 = list(range(r1 - axes, r1)), list(range(axes))
    else:
        a1, a2 = axes
        a1 = [a1] if isinstance(a1, (int, np.integer)) else list(a1)
        a2 = [a2] if isinstance(a2, (int, np.integer)) else list(a2)
    a1, a2 = [a % r1 for a in a1], [a % r2 for a in a2]
    l1 = list(_LETTERS[:r1])
    l2 = list(_LETTERS[r1:r1 + r2])
    for i, j in zip(a1, a2):
        l2[j] = l1[i]
    out = ([c for i, c in enumerate(l1) if i not in a1]
           + [c for j, c in enumerate(l2) if j not in a2])
    return einsum(f"{''.join(l1)},{''.join(l2)}->{''.join(out)}", x1, x2)


def dot(x1, x2):
    """NumPy's dot (keras.ops.dot): the product for scalars, matmul-like otherwise."""
    r1, r2 = len(su.shape_of(x1)), len(su.shape_of(x2))
    if r1 == 0 or r2 == 0:
        return _m.multiply(x1, x2)
    return tensordot(x1, x2, axes=([r1 - 1], [max(r2 - 2, 0)]))


def inner(x1, x2):
    """Sum of products over the last axes of x1 and x2 (keras.ops.inner)."""
    r1, r2 = len(su.shape_of(x1)), len(su.shape_of(x2))
    if r1 == 0 or r2 == 0:
        return _m.multiply(x1, x2)
    return tensordot(x1, x2, axes=([r1 - 1], [r2 - 1]))


def outer(x1, x2):
    """The outer product of x1 and x2, both flattened (keras.ops.outer)."""
    from fkeras.ops.arrangement import ravel

    return _m.multiply(_r.reshape(ravel(x1), (-1, 1)), _r.reshape(ravel(x2), (1, -1)))


def vdot(x1, x2):
    """The dot product of x1 and x2, both flattened (keras.ops.vdot)."""
    from fkeras.ops.arrangement import ravel

    return _m.sum(_m.multiply(ravel(x1), ravel(x2)))


def trace(x, offset=0, axis1=0, axis2=1):
    """Sum along the `offset` diagonal of x over axes axis1, axis2 (keras.ops.trace)."""
    from fkeras.ops.arrangement import diagonal

    return _m.sum(diagonal(x, offset, axis1, axis2), axis=-1)


def norm(x, ord=None, axis=None, keepdims=False):
    """A vector or matrix norm of `x` (keras.ops.norm).

    Vector norms (axis an int, or x 1-D): ord None/2 (Euclidean), 1, inf, -inf, 0, any p.
    Matrix norms (axis a pair, or x 2-D with axis None): "fro"/None, 1, -1, inf, -inf.
    """
    from fkeras.ops.elementwise import _float_input
    from fkeras.ops.reductions import count_nonzero

    x = _float_input(x)
    rank = len(su.shape_of(x))
    if axis is None:
        axis = tuple(range(rank))
        if rank > 2 and ord is not None:
            raise ValueError(f"`norm`: ord={ord!r} needs `axis` for a tensor of rank {rank}.")
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if len(axes) == 1 or (ord is None or ord == "fro"):
        if ord in (None, 2, "fro", "euclidean"):
            if ord == "fro" and len(axes) != 2:
                raise ValueError("`norm`: ord='fro' is a matrix norm (two axes).")
            return _m.sqrt(_m.sum(_m.square(x), axis=axes, keepdims=keepdims))
        if len(axes) != 1:
            raise ValueError(f"`norm`: invalid ord {ord!r} for a vector norm.")
        if ord == np.inf:
            return _m.max(_m.absolute(x), axis=axes, keepdims=keepdims)
        if ord == -np.inf:
            return _m.min(_m.absolute(x), axis=axes, keepdims=keepdims)
        if ord == 0:
            from fkeras.ops.dtypes import cast

            out = count_nonzero(x, axis=axes)
            out = _r.expand_dims(out, axes[0]) if keepdims else out
            return cast(out, "float32")
        if isinstance(ord, str):
            raise ValueError(f"`norm`: invalid ord {ord!r} for a vector norm.")
        p = float(ord)
        return _m.power(_m.sum(_m.power(_m.absolute(x), p), axis=axes, keepdims=keepdims),
                        1.0 / p)
    if len(axes) != 2:
        raise ValueError(f"`norm`: `axis` must be an int or a pair; received {axis!r}.")
    a0, a1 = (a % rank for a in axes)
    if ord in (1, -1):
        col = _m.sum(_m.absolute(x), axis=a0, keepdims=True)
        red = _m.max if ord == 1 else _m.min
        out = red(col, axis=a1, keepdims=True)
    elif ord in (np.inf, -np.inf):
        row = _m.sum(_m.absolute(x), axis=a1, keepdims=True)
        red = _m.max if ord == np.inf else _m.min
        out = red(row, axis=a0, keepdims=True)
    else:
        raise ValueError(f"`norm`: matrix norm ord={ord!r} is not supported by fkeras "
                         "(supported: None, 'fro', 1, -1, inf, -inf).")
    return out if keepdims else _r.squeeze(out, axis=(a0, a1))


def cross(x1, x2, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 3-vectors along the given axes (keras.ops.cross)."""
    from fkeras.ops.arrangement import moveaxis
    from fkeras.ops.reshape_ops import getitem

    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = moveaxis(x1, axisa, -1), moveaxis(x2, axisb, -1)
    if su.shape_of(a)[-1] != 3 or su.shape_of(b)[-1] != 3:
        raise ValueError("fkeras's `cross` supports 3-vectors; received shapes "
                         f"{su.shape_of(x1)} and {su.shape_of(x2)}.")
    a0, a1, a2 = (getitem(a, (Ellipsis, i)) for i in range(3))
    b0, b1, b2 = (getitem(b, (Ellipsis, i)) for i in range(3))
    from fkeras.ops.arrangement import stack

    c = stack([_m.subtract(_m.multiply(a1, b2), _m.multiply(a2, b1)),
               _m.subtract(_m.multiply(a2, b0), _m.multiply(a0, b2)),
               _m.subtract(_m.multiply(a0, b1), _m.multiply(a1, b0))], axis=-1)
    return moveaxis(c, -1, axisc)


def kron(x1, x2):
    """The Kronecker product of x1 and x2 (keras.ops.kron)."""
    s1, s2 = su.shape_of(x1), su.shape_of(x2)
    rank = max(len(s1), len(s2))
    a = _r.reshape(x1, (1,) * (rank - len(s1)) + tuple(s1))
    b = _r.reshape(x2, (1,) * (rank - len(s2)) + tuple(s2))
    sa, sb = su.shape_of(a), su.shape_of(b)
    # interleave: a[i, None, j, None] * b[None, k, None, l] -> reshape (i*k, j*l)
    a_exp = _r.reshape(a, tuple(d for n in sa for d in (n, 1)))
    b_exp = _r.reshape(b, tuple(d for n in sb for d in (1, n)))
    return _r.reshape(_m.multiply(a_exp, b_exp), tuple(p * q for p, q in zip(sa, sb)))


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of `y` along `axis` by the trapezoidal rule (keras.ops.trapezoid)."""
    from fkeras.ops.reshape_ops import getitem

    rank = len(su.shape_of(y))
    ax = axis % rank
    lead = (slice(None),) * ax
    hi, lo = getitem(y, lead + (slice(1, None),)), getitem(y, lead + (slice(None, -1),))
    if x is None:
        widths = dx
    else:
        xr = len(su.shape_of(x))
        xa = ax if xr == rank else 0
        xl = (slice(None),) * xa
        widths = _m.subtract(getitem(x, xl + (slice(1, None),)),
                             getitem(x, xl + (slice(None, -1),)))
    return _m.sum(_m.multiply(_m.multiply(_m.add(hi, lo), 0.5), widths), axis=ax)
