"""Reference GEMM and Dense kernels: the float64 spec of cpp/gemm/ (signatures as kernels.h).

Outputs are overwritten through `.reshape(...)[...] =`, so they may be any contiguous array of
the right size (float64 on the reference device, float32 in tests that compare devices).
"""

import numpy as np

from fkeras.backend.reference import activation_math


def _f64(a, *shape):
    return np.asarray(a, dtype=np.float64).reshape(shape)


def gemm(C, A, B, M, N, K, trans_a, trans_b, alpha, beta):
    """C (M, N) = alpha * op(A) @ op(B) + beta * C.

    Args:
        C: the output, read only when beta != 0 (NaN in C does not leak when beta == 0).
        A: (M, K), or (K, M) when trans_a.
        B: (K, N), or (N, K) when trans_b.
        M, N, K: the sizes; any may be 0 (K == 0 gives beta * C).
        alpha, beta: scalars.
    """
    a = _f64(A, K, M).T if trans_a else _f64(A, M, K)
    b = _f64(B, N, K).T if trans_b else _f64(B, K, N)
    out = alpha * (a @ b)
    if beta != 0.0:
        out = out + beta * _f64(C, M, N)
    C.reshape(M, N)[...] = out


def dense_forward(y, x, kernel, bias, M, N, K, activation, alpha):
    """y (M, N) = act(x (M, K) @ kernel (K, N) + bias (N)); bias may be None.

    `activation` is a fused code (activation_math.OUTPUT_DERIVABLE); `alpha` is ELU's alpha or
    LeakyReLU's slope.
    """
    z = _f64(x, M, K) @ _f64(kernel, K, N)
    if bias is not None:
        z = z + _f64(bias, N)
    y.reshape(M, N)[...] = activation_math.forward(z, activation, alpha)


def dense_backward(dx, dkernel, dbias, dy, x, y, kernel, M, N, K, activation, alpha):
    """Backward of dense_forward from dy (M, N) and the forward's x and output y.

    dz = dy * act'(from y); dx (M, K) = dz @ kernel^T, dkernel (K, N) = x^T @ dz,
    dbias (N) = dz summed over rows. Each output may be None (not computed).
    """
    dz = _f64(dy, M, N) * activation_math.derivative_from_output(_f64(y, M, N), activation, alpha)
    if dx is not None:
        dx.reshape(M, K)[...] = dz @ _f64(kernel, K, N).T
    if dkernel is not None:
        dkernel.reshape(K, N)[...] = _f64(x, M, K).T @ dz
    if dbias is not None:
        dbias.reshape(N)[...] = dz.sum(axis=0)


def bias_activation_backward(dz, dbias, dy, y, M, N, activation, alpha):
    """The dy pass of a fused backward: dz (M, N) = dy * act'(from y), dbias (N) = dz summed
    over rows. Either output may be None (not computed)."""
    d = _f64(dy, M, N) * activation_math.derivative_from_output(_f64(y, M, N), activation, alpha)
    if dz is not None:
        dz.reshape(M, N)[...] = d
    if dbias is not None:
        dbias.reshape(N)[...] = d.sum(axis=0)


KERNELS = {
    "gemm": gemm,
    "dense_forward": dense_forward,
    "dense_backward": dense_backward,
    "bias_activation_backward": bias_activation_backward,
}
