"""Linear algebra (keras.ops names and signatures, keras.ops.linalg's functions): inv, det,
slogdet, logdet, solve, solve_triangular, cholesky (differentiable, batched over leading
axes), and qr, svd, eig, eigh, lu_factor, lstsq, pinv, matrix_rank (forward only:
`differentiable = False`; their gradients are not implemented in fkeras).

Backward formulas (A: (..., N, N), G the cotangent, T the transpose of the last two axes):
inv: dA = -Y^T G Y^T; det: dA = G det(A) A^-T; slogdet: dA = G A^-T; solve: dB = A^-T G,
dA = -dB X^T; cholesky (Murray 2016): S = L^-T Phi(L^T G) L^-1, dA = (S + S^T) / 2 with
Phi taking the lower triangle and halving the diagonal.
"""

import numpy as np

from fkeras.engine.keras_tensor import KerasTensor
from fkeras.ops import shape_utils as su
from fkeras.ops.elementwise import _float_input
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import Op, apply


def _T(a):
    return np.swapaxes(a, -1, -2)


def _check_square(shape, name):
    if len(shape) < 2 or (None not in shape[-2:] and shape[-1] != shape[-2]):
        raise ValueError(f"`{name}` needs square matrices in the last two axes; received "
                         f"shape {tuple(shape)}.")


class Inv(Op):
    name = "inv"

    def output_spec(self, a):
        _check_square(su.shape_of(a), "inv")
        return su.shape_of(a)

    def forward(self, dev, a):
        y = np.linalg.inv(a).astype(a.dtype, copy=False)
        return y, y

    def backward(self, dev, y, g, needs):
        return (-(_T(y) @ g @ _T(y)),)


class Det(Op):
    name = "det"

    def output_spec(self, a):
        _check_square(su.shape_of(a), "det")
        return su.shape_of(a)[:-2]

    def forward(self, dev, a):
        d = np.asarray(np.linalg.det(a), a.dtype)
        return d, (a, d)

    def backward(self, dev, saved, g, needs):
        a, d = saved
        return ((np.asarray(g * d)[..., None, None] * _T(np.linalg.inv(a))).astype(a.dtype),)


class SlogDet(Op):
    name = "slogdet"
    n_outputs = 2

    def output_spec(self, a):
        _check_square(su.shape_of(a), "slogdet")
        shape = su.shape_of(a)[:-2]
        return [KerasTensor(shape, getattr(a, "dtype", "float32")),
                KerasTensor(shape, getattr(a, "dtype", "float32"))]

    def forward(self, dev, a):
        sign, logdet = np.linalg.slogdet(a)
        return (np.asarray(sign, a.dtype), np.asarray(logdet, a.dtype)), a

    def backward(self, dev, a, grads, needs):
        return ((np.asarray(grads[1])[..., None, None] * _T(np.linalg.inv(a))).astype(a.dtype),)


class Solve(Op):
    name = "solve"

    def output_spec(self, a, b):
        _check_square(su.shape_of(a), "solve")
        return su.shape_of(b)

    def forward(self, dev, a, b):
        vec = b.ndim == a.ndim - 1
        x = np.linalg.solve(a, b[..., None] if vec else b)
        x = (x[..., 0] if vec else x).astype(b.dtype, copy=False)
        return x, (a, x, vec)

    def backward(self, dev, saved, g, needs):
        a, x, vec = saved
        g2, x2 = (g[..., None], x[..., None]) if vec else (g, x)
        gb = np.linalg.solve(_T(a), g2)
        ga = -(gb @ _T(x2)) if needs[0] else None
        return ga, ((gb[..., 0] if vec else gb) if needs[1] else None)


class SolveTriangular(Op):
    name = "solve_triangular"

    def output_spec(self, a, b, lower=False):
        _check_square(su.shape_of(a), "solve_triangular")
        return su.shape_of(b)

    def forward(self, dev, a, b, lower=False):
        tri = np.tril(a) if lower else np.triu(a)
        vec = b.ndim == a.ndim - 1
        x = np.linalg.solve(tri, b[..., None] if vec else b)
        x = (x[..., 0] if vec else x).astype(b.dtype, copy=False)
        return x, (tri, x, vec)

    def backward(self, dev, saved, g, needs, lower=False):
        tri, x, vec = saved
        g2, x2 = (g[..., None], x[..., None]) if vec else (g, x)
        gb = np.linalg.solve(_T(tri), g2)
        ga = None
        if needs[0]:
            full = -(gb @ _T(x2))
            ga = np.tril(full) if lower else np.triu(full)
        return ga, ((gb[..., 0] if vec else gb) if needs[1] else None)


class Cholesky(Op):
    name = "cholesky"

    def output_spec(self, a, upper=False):
        _check_square(su.shape_of(a), "cholesky")
        return su.shape_of(a)

    def forward(self, dev, a, upper=False):
        try:
            low = np.linalg.cholesky(a)
        except np.linalg.LinAlgError as e:
            raise ValueError(f"`cholesky`: the input is not positive definite ({e}).") from e
        low = low.astype(a.dtype, copy=False)
        return (np.ascontiguousarray(_T(low)) if upper else low), low

    def backward(self, dev, low, g, needs, upper=False):
        if upper:
            g = _T(g)
        phi = np.tril(_T(low) @ g)
        phi = phi - 0.5 * np.tril(np.triu(phi))  # halve the diagonal
        inv_low = np.linalg.inv(low)
        s = _T(inv_low) @ phi @ inv_low
        return (0.5 * (s + _T(s)),)


class _ForwardOnly(Op):
    differentiable = False

    def output_spec(self, *args, **attrs):
        raise ValueError(f"`{self.name}` needs eager tensors in fkeras.")


class Qr(_ForwardOnly):
    name = "qr"
    n_outputs = 2

    def forward(self, dev, a, mode="reduced"):
        q, r = np.linalg.qr(a, mode=mode)
        return (q.astype(a.dtype), r.astype(a.dtype)), None


class Svd(_ForwardOnly):
    name = "svd"

    def forward(self, dev, a, full_matrices=True, compute_uv=True):
        out = np.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
        if compute_uv:
            return tuple(o.astype(a.dtype) for o in out), None
        return out.astype(a.dtype), None


class Eigh(_ForwardOnly):
    name = "eigh"

    def forward(self, dev, a):
        w, v = np.linalg.eigh(a)
        return (w.astype(a.dtype), v.astype(a.dtype)), None


class Eig(_ForwardOnly):
    name = "eig"

    def forward(self, dev, a):
        w, v = np.linalg.eig(a)
        if np.iscomplexobj(w) and np.any(np.imag(w)):
            raise ValueError("`eig`: the eigenvalues are complex; fkeras tensors are real.")
        return (np.real(w).astype(a.dtype), np.real(v).astype(a.dtype)), None


def inv(x):
    """The inverse of the square matrices in the last two axes of `x` (keras.ops.inv)."""
    return apply(_R["inv"], _float_input(x))


def det(x):
    """The determinant of the square matrices in the last two axes (keras.ops.det)."""
    return apply(_R["det"], _float_input(x))


def slogdet(x):
    """(sign, log|det|) of the square matrices in the last two axes (keras.ops.slogdet)."""
    return tuple(apply(_R["slogdet"], _float_input(x)))


def logdet(x):
    """log(det(x)) for matrices with a positive determinant (keras.ops.logdet)."""
    from fkeras.ops.math import log

    return log(det(x))


def solve(a, b):
    """x with a @ x = b (b: (..., N) or (..., N, K)) (keras.ops.solve)."""
    from fkeras.ops.dtypes import promote

    return apply(_R["solve"], *promote(_float_input(a), _float_input(b)))


def solve_triangular(a, b, lower=False):
    """x with tri(a) @ x = b, tri the lower or upper triangle (keras.ops.solve_triangular)."""
    from fkeras.ops.dtypes import promote

    return apply(_R["solve_triangular"], *promote(_float_input(a), _float_input(b)),
                 lower=bool(lower))


def cholesky(x, upper=False):
    """The Cholesky factor L (x = L L^T), or L^T when `upper` (keras.ops.cholesky)."""
    return apply(_R["cholesky"], _float_input(x), upper=bool(upper))


def cholesky_inverse(x, upper=False):
    """The inverse of A from its Cholesky factor `x` (keras.ops.cholesky_inverse)."""
    from fkeras.ops.math import matmul
    from fkeras.ops.reshape_ops import transpose

    rank = len(su.shape_of(x))
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    factor = transpose(x, perm) if upper else x
    return inv(matmul(factor, transpose(factor, perm)))


def qr(x, mode="reduced"):
    """(q, r) of `x` (keras.ops.qr); not differentiable in fkeras."""
    if mode not in ("reduced", "complete"):
        raise ValueError(f"`mode` must be 'reduced' or 'complete'; received {mode!r}.")
    return tuple(apply(_R["qr"], _float_input(x), mode=mode))


def svd(x, full_matrices=True, compute_uv=True):
    """(u, s, vh) of `x`, or s alone (keras.ops.svd); not differentiable in fkeras."""
    out = apply(_R["svd"], _float_input(x), full_matrices=bool(full_matrices),
                compute_uv=bool(compute_uv))
    return tuple(out) if compute_uv else out


def eigh(x):
    """(eigenvalues, eigenvectors) of symmetric `x` (keras.ops.eigh); not differentiable."""
    return tuple(apply(_R["eigh"], _float_input(x)))


def eig(x):
    """(eigenvalues, eigenvectors) of `x` with real eigenvalues (keras.ops.eig)."""
    return tuple(apply(_R["eig"], _float_input(x)))


def _eager(x, name):
    if isinstance(x, KerasTensor):
        raise ValueError(f"`{name}` needs eager tensors in fkeras.")
    return np.asarray(getattr(x, "_value", x), np.float64)


def pinv(x, rcond=None):
    """The Moore-Penrose pseudo-inverse (keras.ops.pinv); not differentiable in fkeras.

    Args:
        x: (..., M, N) matrices.
        rcond: singular values below `rcond * largest` are treated as zero; None:
            max(M, N) * float eps, as Keras (NumPy 2 / torch's default).
    """
    from fkeras.ops.core import convert_to_tensor

    a = _eager(x, "pinv")
    if rcond is None:
        rcond = max(a.shape[-2:], default=1) * np.finfo(np.float32).eps
    return convert_to_tensor(np.linalg.pinv(a, rcond=rcond).astype(np.float32))


def matrix_rank(x, tol=None):
    """The rank of the matrices in the last two axes (keras.ops.matrix_rank); int32."""
    from fkeras.ops.core import convert_to_tensor

    return convert_to_tensor(np.asarray(np.linalg.matrix_rank(_eager(x, "matrix_rank"), tol),
                                        np.int32))


def lstsq(a, b, rcond=None):
    """The least-squares solution of a @ x = b (keras.ops.lstsq); not differentiable."""
    from fkeras.ops.core import convert_to_tensor

    sol = np.linalg.lstsq(_eager(a, "lstsq"), _eager(b, "lstsq"), rcond=rcond)[0]
    return convert_to_tensor(sol.astype(np.float32))


def lu_factor(x):
    """(lu, pivots) with the unit-lower L and U packed in `lu` and row pivots, LAPACK-style
    (keras.ops.lu_factor); not differentiable."""
    from fkeras.ops.core import convert_to_tensor

    a = _eager(x, "lu_factor").copy()
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"fkeras's `lu_factor` takes one square matrix; received {a.shape}.")
    n = a.shape[0]
    piv = np.zeros(n, np.int32)
    for k in range(n):
        p = k + int(np.argmax(np.abs(a[k:, k])))
        piv[k] = p
        if p != k:
            a[[k, p]] = a[[p, k]]
        if a[k, k] != 0:
            a[k + 1:, k] /= a[k, k]
            a[k + 1:, k + 1:] -= np.outer(a[k + 1:, k], a[k, k + 1:])
    return convert_to_tensor(a.astype(np.float32)), convert_to_tensor(piv)


# keras.ops.linalg's other names resolve to the fkeras.ops functions (ops/groupings.py)
from fkeras.ops import groupings as _groupings  # noqa: E402

__getattr__ = _groupings.resolver(_groupings.LINALG, __name__)
