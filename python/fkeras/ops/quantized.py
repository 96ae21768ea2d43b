"""The int8 Dense product (Keras 3's int8 `Dense._int8_call` before bias and activation; also
int8 EinsumDense's, on the equation's GEMM view: layers/core/int8_quantize.py).

forward: y = float32(quantize_rows(x) @ kernel) / (kernel_scale * inputs_scale), the inputs
quantized per row (abs-max, [-127, 127]) inside the kernel (cpp/quantize, one fused call).
backward: Keras's custom gradient: dx = dy @ (float32(kernel) / kernel_scale)^T, through the
dequantized kernel; no gradient to the int8 kernel or to its scale.
A user's activation quantizer (`DenseInt8Codes`: its codes through the int8 matmul kernel) and
weight-only int8 (`DenseInt8WeightOnly`, no activation quantizer) follow Keras's steps too.
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
        return _input_gradient(dev, g, x_shape, kernel, kernel_scale), None, None


def _input_gradient(dev, g, x_shape, kernel, kernel_scale):
    """Keras's custom gradient of the int8 products: dx = upstream @ (float32(kernel) /
    kernel_scale)^T."""
    K, N = kernel.shape
    float_kernel = np.ascontiguousarray(kernel.astype(np.float32) /
                                        np.asarray(kernel_scale, np.float32))
    g2 = np.ascontiguousarray(g, dtype=np.float32).reshape(-1, N)
    dx = dev.empty((g2.shape[0], K))
    dev.kernels["gemm"](dx, g2, float_kernel, g2.shape[0], K, N, False, True, 1.0, 0.0)
    return dx.reshape(x_shape)


class DenseInt8Codes(Op):
    """Keras's int8 Dense product with the inputs already quantized by a user's activation
    quantizer: y = float32(codes @ kernel) / (kernel_scale * inputs_scale), the scales
    broadcast as given (per row (..., 1), or per tensor). `x` (the float inputs) only carries
    the input gradient (Keras's custom one); none reaches the codes or the scales."""

    name = "dense_int8_codes"

    def output_spec(self, x, codes, inputs_scale, kernel, kernel_scale):
        return DenseInt8.output_spec(self, x, kernel, kernel_scale)

    def forward(self, dev, x, codes, inputs_scale, kernel, kernel_scale):
        K, N = kernel.shape
        c2 = np.asarray(codes).reshape(-1, K)
        if c2.dtype == np.int8:
            acc = np.empty((c2.shape[0], N), np.int32)
            dev.kernels["matmul_int8"](acc, np.ascontiguousarray(c2),
                                       np.ascontiguousarray(kernel), c2.shape[0], N, K)
        else:  # a quantizer with another integer output dtype: exact int64 sums, as int32
            acc = (c2.astype(np.int64) @ np.asarray(kernel, np.int64)).astype(np.int32)
        y = acc.astype(np.float32).reshape(np.shape(codes)[:-1] + (N,))
        scale = np.multiply(np.asarray(kernel_scale, np.float32),
                            np.asarray(inputs_scale, np.float32))
        with np.errstate(invalid="ignore", divide="ignore"):
            y = np.divide(y, scale, dtype=np.float32)
        return y, (x.shape, kernel, kernel_scale)

    def backward(self, dev, saved, g, needs):
        x_shape, kernel, kernel_scale = saved
        dx = _input_gradient(dev, g, x_shape, kernel, kernel_scale) if needs[0] else None
        return dx, None, None, None, None


class DenseInt8WeightOnly(Op):
    """Keras's int8 Dense product without an activation quantizer (weight-only int8):
    y = (x @ float32(kernel)) / kernel_scale, in float32; input gradient as DenseInt8's."""

    name = "dense_int8_weight_only"

    def output_spec(self, x, kernel, kernel_scale):
        return DenseInt8.output_spec(self, x, kernel, kernel_scale)

    def forward(self, dev, x, kernel, kernel_scale):
        K, N = kernel.shape
        x2 = np.ascontiguousarray(x, dtype=np.float32).reshape(-1, K)
        y = dev.empty((x2.shape[0], N))
        dev.kernels["gemm"](y, x2, np.ascontiguousarray(kernel, np.float32), x2.shape[0], N, K,
                            False, False, 1.0, 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            y = np.divide(y, np.asarray(kernel_scale, np.float32), dtype=np.float32)
        return y.reshape(x.shape[:-1] + (N,)), (x.shape, kernel, kernel_scale)

    backward = DenseInt8.backward


def dense_int8(x, kernel, kernel_scale, inputs_quantizer="default"):
    """The int8 Dense product of float inputs `x` (..., K) with an int8 `kernel` (K, N) and
    its per-column `kernel_scale` (N,): float32 outputs (..., N). `inputs_quantizer`: the
    default AbsMaxQuantizer (the fused kernel), None (weight-only int8), or another quantizer
    called as Keras calls it, `quantizer(x, axis=-1) -> (codes, scale)`."""
    from fkeras.engine.keras_tensor import KerasTensor

    if isinstance(inputs_quantizer, str) or isinstance(x, KerasTensor):  # (symbolic: shapes)
        return apply(_R["dense_int8"], x, kernel, kernel_scale)
    if inputs_quantizer is None:
        return apply(_R["dense_int8_weight_only"], x, kernel, kernel_scale)
    from fkeras.engine.tape import stop_recording
    from fkeras.engine.tensor import run_user

    with stop_recording():  # no gradient through the quantizer (Keras's custom gradient)
        codes, scale = run_user(inputs_quantizer, x, axis=-1)
    return apply(_R["dense_int8_codes"], x, codes, scale, kernel, kernel_scale)
