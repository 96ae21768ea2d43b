"""Reference int8 quantization kernels (cpp/include/fkeras/kernels.h): NumPy, int64 sums.

The quantizer's arithmetic is float32 on purpose: it is the spec of Keras's float32
`abs_max_quantize` (scale = 127 / (max|x| + 1e-7), round half to even, clip to [-127, 127]),
whose rounding a float64 computation would not reproduce.
"""

import numpy as np

_EPS = np.float32(1e-7)
_BOUND = np.float32(127.0)


def quantize_rows(x):
    """(q int8 (M, K), scale float32 (M,)) of a float32 (M, K) array, row by row."""
    x = np.asarray(x, dtype=np.float32)
    with np.errstate(invalid="ignore", divide="ignore"):
        amax = np.max(np.abs(x), axis=-1) if x.shape[-1] else np.zeros(x.shape[:-1], np.float32)
        scale = (_BOUND / (amax + _EPS)).astype(np.float32)
        r = np.clip(np.round(x * scale[..., None]), -_BOUND, _BOUND)
    q = np.where(np.isnan(r), 0, r).astype(np.int8)
    return q, scale


def quantize_int8_rows(q, scale, x, M, K):
    q[...], scale[...] = quantize_rows(np.reshape(x, (M, K)))


def matmul_int8(C, A, B, M, N, K):
    prod = np.asarray(A, np.int64).reshape(M, K) @ np.asarray(B, np.int64).reshape(K, N)
    C[...] = prod.astype(np.uint32).view(np.int32).reshape(C.shape)  # wraps like int32


def dense_int8_forward(y, x, kernel, kernel_scale, M, N, K):
    q, sx = quantize_rows(np.reshape(x, (M, K)))
    acc = np.empty((M, N), np.int32)
    matmul_int8(acc, q, kernel, M, N, K)
    ks = np.asarray(kernel_scale, np.float32)
    with np.errstate(invalid="ignore", divide="ignore"):
        y[...] = (acc.astype(np.float32) / (ks[None, :] * sx[:, None])).reshape(y.shape)


KERNELS = {
    "quantize_int8_rows": quantize_int8_rows,
    "matmul_int8": matmul_int8,
    "dense_int8_forward": dense_int8_forward,
}
