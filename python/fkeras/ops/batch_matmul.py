"""batch_matmul: a stack of matrix products on the device's GEMM kernel (attention's q k^T and
p v), with the second operand optionally transposed so that no transposed copy is made.

    out[i] = a[i] @ b[i]        (transpose_b=False; b[i] is (K, N))
    out[i] = a[i] @ b[i]^T      (transpose_b=True;  b[i] is (N, K))

a: (*lead, M, K); b: (*lead, K, N) or (*lead, N, K), the same leading axes (no broadcasting).
NumPy's stacked matmul does not call BLAS; one GEMM call per matrix does (the Python loop costs
a few microseconds per matrix, small next to an attention head's product).
Backward (g = dL/dout, per matrix):
    da = g @ b^T (or g @ b when transposed);  db = a^T @ g (or g^T @ a when transposed).
"""

import numpy as np

from fkeras.ops import shape_utils as su
from fkeras.ops.registry import REGISTRY, Op, apply


def _dims(sa, sb, transpose_b):
    """(M, K, N) of one product, checking the operands."""
    if len(sa) < 2 or len(sb) != len(sa):
        raise ValueError("`batch_matmul` needs two tensors of the same rank >= 2, received "
                         f"shapes {tuple(sa)} and {tuple(sb)}.")
    for x, y in zip(sa[:-2], sb[:-2]):
        if x is not None and y is not None and x != y:
            raise ValueError("`batch_matmul`: the leading axes must be equal, received "
                             f"shapes {tuple(sa)} and {tuple(sb)}.")
    M, K = sa[-2], sa[-1]
    kb, N = (sb[-1], sb[-2]) if transpose_b else (sb[-2], sb[-1])
    if K is not None and kb is not None and K != kb:
        raise ValueError(f"`batch_matmul`: inner dimensions do not match: {tuple(sa)} and "
                         f"{tuple(sb)} (transpose_b={transpose_b}).")
    return M, K, N


class BatchMatmul(Op):
    name = "batch_matmul"

    def output_spec(self, a, b, transpose_b=False):
        sa, sb = su.shape_of(a), su.shape_of(b)
        M, _, N = _dims(sa, sb, transpose_b)
        return tuple(sa[:-2]) + (M, N)

    def forward(self, dev, a, b, transpose_b=False):
        M, K, N = _dims(a.shape, b.shape, transpose_b)
        a3 = np.ascontiguousarray(a).reshape((-1, M, K))
        b3 = np.ascontiguousarray(b).reshape((-1,) + tuple(b.shape[-2:]))
        out = dev.empty((a3.shape[0], M, N))
        gemm = dev.kernels["gemm"]
        for i in range(a3.shape[0]):
            gemm(out[i], a3[i], b3[i], M, N, K, False, bool(transpose_b), 1.0, 0.0)
        return out.reshape(tuple(a.shape[:-2]) + (M, N)), (a3, b3, a.shape, b.shape)

    def backward(self, dev, saved, g, needs, transpose_b=False):
        a3, b3, a_shape, b_shape = saved
        _, M, K = a3.shape
        N = b3.shape[1] if transpose_b else b3.shape[2]
        g3 = np.ascontiguousarray(g).reshape((-1, M, N))
        gemm = dev.kernels["gemm"]
        da = db = None
        if needs[0]:
            da = dev.empty(a3.shape)
            for i in range(a3.shape[0]):  # (M, K) = g (M, N) @ b^T, or g @ b when transposed
                gemm(da[i], g3[i], b3[i], M, K, N, False, not transpose_b, 1.0, 0.0)
            da = da.reshape(a_shape)
        if needs[1]:
            db = dev.empty(b3.shape)
            for i in range(a3.shape[0]):
                if transpose_b:  # (N, K) = g^T (N, M) @ a (M, K)
                    gemm(db[i], g3[i], a3[i], N, K, M, True, False, 1.0, 0.0)
                else:            # (K, N) = a^T (K, M) @ g (M, N)
                    gemm(db[i], a3[i], g3[i], K, N, M, True, False, 1.0, 0.0)
            db = db.reshape(b_shape)
        return da, db


def batch_matmul(a, b, transpose_b=False):
    """`a[i] @ b[i]` (or `a[i] @ b[i]^T`) over equal leading axes, on the GEMM kernel.

    Args:
        a: (..., M, K). b: (..., K, N), or (..., N, K) with transpose_b=True.

    Returns:
        (..., M, N).
    """
    return apply(REGISTRY["batch_matmul"], a, b, transpose_b=bool(transpose_b))
