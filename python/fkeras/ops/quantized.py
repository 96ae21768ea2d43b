"""The int8 Dense product (Keras 3's int8 `Dense._int8_call` before bias and activation; also
int8 EinsumDense's, on the equation's GEMM view: layers/core/int8_quantize.py).

forward: y = float32(quantize_rows(x) @ kernel) / (kernel_scale * inputs_scale), the inputs
quantized per row (abs-max, [-127, 127]) inside the kernel (cpp/quantize, one fused call).
backward: Keras's custom gradient: dx = dy @ (float32(kernel) / kernel_scale)^T, through the
dequantized kernel; no gradient to the int8 kernel or to its scale.
"""

import numpy as np

from fkeras.ops import shape_utils as su
from fkeras.ops.registry import REGISTRY as _R
from fkeras.ops.registry import Op, apply


class DenseInt8(Op):
    """y = dequantize(quantize_rows(x) @ kernel) over the last axis of x (any rank >= 2)."""

    name = "dense_int8"

    def output_spec(self, x, kernel, kernel_scale):
        xs, ks = su.shape_of(x), su.shape_of(kernel)
        if xs[-1] is not None and xs[-1] != ks[0]:
            raise ValueError(f"`dense_int8`: the last axis of x ({xs}) must equal the "
                             f"kernel's first axis ({ks}).")
        return xs[:-1] + (ks[1],)

    def forward(self, dev, x, kernel, kernel_scale):
        K, N = kernel.shape
        x2 = np.ascontiguousarray(x, dtype=np.float32).reshape(-1, K)
        y = dev.empty((x2.shape[0], N))
        dev.kernels["dense_int8_forward"](y, x2, np.ascontiguousarray(kernel),
                                          np.ascontiguousarray(kernel_scale, np.float32),
                                          x2.shape[0], N, K)
        return y.reshape(x.shape[:-1] + (N,)), (x.shape, kernel, kernel_scale)

    def backward(self, dev, saved, g, needs):
        x_shape, kernel, kernel_scale = saved
        if not needs[0]:
            return None, None, None
        K, N = kernel.shape
        # Keras: divide(cast(kernel, float32), kernel_scale), then upstream @ its transpose.
        float_kernel = np.ascontiguousarray(kernel.astype(np.float32) /
                                            np.asarray(kernel_scale, np.float32))
        g2 = np.ascontiguousarray(g, dtype=np.float32).reshape(-1, N)
        dx = dev.empty((g2.shape[0], K))
        dev.kernels["gemm"](dx, g2, float_kernel, g2.shape[0], K, N, False, True, 1.0, 0.0)
        return dx.reshape(x_shape), None, None


def dense_int8(x, kernel, kernel_scale):
    """The int8 Dense product of float inputs `x` (..., K) with an int8 `kernel` (K, N) and
    its per-column `kernel_scale` (N,): float32 outputs (..., N)."""
    return apply(_R["dense_int8"], x, kernel, kernel_scale)
