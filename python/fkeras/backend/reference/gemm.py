"""Reference GEMM and Dense kernels (float64 spec of cpp/gemm/; signatures as kernels.h)."""

import numpy as np

from fkeras.backend.reference import activation_math


def _f64(a, *shape):
    return np.asarray(a, dtype=np.float64).reshape(shape)


def gemm(C, A, B, M, N, K, trans_a, trans_b, alpha, beta):
    a = _f64(A, K, M).T if trans_a else _f64(A, M, K)
    b = _f64(B, N, K).T if trans_b else _f64(B, K, N)
    out = alpha * (a @ b)
    if beta != 0.0:
        out = out + beta * _f64(C, M, N)
    C.reshape(M, N)[...] = out


def dense_forward(y, x, kernel, bias, M, N, K, activation, alpha):
    z = _f64(x, M, K) @ _f64(kernel, K, N)
    if bias is not None:
        z = z + _f64(bias, N)
    y.reshape(M, N)[...] = activation_math.forward(z, activation, alpha)


def dense_backward(dx, dkernel, dbias, dy, x, y, kernel, M, N, K, activation, alpha):
    x64 = _f64(x, M, K)
    dz = _f64(dy, M, N) * activation_math.derivative_from_output(_f64(y, M, N), activation, alpha)
    if dx is not None:
        dx.reshape(M, K)[...] = dz @ _f64(kernel, K, N).T
    if dkernel is not None:
        dkernel.reshape(K, N)[...] = x64.T @ dz
    if dbias is not None:
        dbias.reshape(N)[...] = dz.sum(axis=0)


KERNELS = {
    "gemm": gemm,
    "dense_forward": dense_forward,
    "dense_backward": dense_backward,
}
