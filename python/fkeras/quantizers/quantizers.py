"""Keras 3's int8 quantizers: `abs_max_quantize`, `Quantizer`, `AbsMaxQuantizer`,
`quantize_and_dequantize`.

The arithmetic is float32, step by step as Keras computes it (so the codes and scales are
bit-identical to Keras's): scale = value_range[1] / (max|x| + epsilon) over `axis` (kept as a
size-1 axis), codes = clip(round_half_even(x * scale), *value_range) cast to `dtype`.
"""

import numpy as np

from fkeras import ops


def _float32(x):
    return np.asarray(ops.convert_to_numpy(x) if not isinstance(x, np.ndarray) else x,
                      dtype=np.float32)


def _abs_max_numpy(x, axis, value_range, dtype, epsilon):
    x = _float32(x)
    axis = tuple(axis) if isinstance(axis, (list, tuple)) else axis
    with np.errstate(invalid="ignore", divide="ignore"):
        amax = np.max(np.abs(x), axis=axis, keepdims=True)
        scale = (np.float32(value_range[1]) / (amax + np.float32(epsilon))).astype(np.float32)
        codes = np.clip(np.round(x * scale), value_range[0], value_range[1])
    return np.where(np.isnan(codes), 0, codes).astype(dtype), scale


def abs_max_quantize(inputs, axis, value_range=(-127, 127), dtype="int8", epsilon=1e-7,
                     to_numpy=False):
    """Quantizes `inputs` with the absolute-maximum scheme along `axis` (Keras 3).

    Args:
        inputs: the float tensor to quantize.
        axis: the axis (or axes) reduced to find the range; the scale keeps it with size 1.
        value_range: (min, max) of the codes; default (-127, 127).
        dtype: the codes' dtype; default "int8".
        epsilon: added to the absolute maximum before dividing (default 1e-7, Keras's).
        to_numpy: accepted for Keras compatibility: fkeras always computes on the host.

    Returns:
        `(codes, scale)`: the integer codes and the float32 scale (codes ~ inputs * scale).

    Example:
    ```python
    q, s = keras.quantizers.abs_max_quantize(np.array([[1.0, -2.0]]), axis=-1)
    # q == [[64, -127]], s == [[63.5]]
    ```
    """
    codes, scale = _abs_max_numpy(inputs, axis, value_range, dtype, epsilon)
    return ops.convert_to_tensor(codes), ops.convert_to_tensor(scale)


class Quantizer:
    """Base class of quantizers (Keras 3): a callable from a float tensor to its quantized form.

    Args:
        output_dtype: the dtype of the codes; default "int8".
    """

    def __init__(self, output_dtype="int8"):
        self.output_dtype = output_dtype

    def __call__(self, x):
        return x

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def get_config(self):
        """The constructor arguments (`from_config` rebuilds an equal quantizer)."""
        return {"output_dtype": self.output_dtype}


class AbsMaxQuantizer(Quantizer):
    """The absolute-maximum quantizer (`abs_max_quantize` with fixed settings), Keras 3.

    Args:
        axis: deprecated in Keras (give it to `__call__`); the default axis of `__call__`.
        value_range: (min, max) of the codes, within [-128, 127] for int8 codes.
        epsilon: added to the absolute maximum; default 1e-7.
        output_dtype: the codes' dtype; default "int8".
    """

    def __init__(self, axis=None, value_range=(-127, 127), epsilon=1e-7, output_dtype="int8"):
        super().__init__(output_dtype=output_dtype)
        self.axis = None if axis is None else (
            (axis,) if isinstance(axis, int) else tuple(axis))
        if output_dtype == "int8" and (value_range[0] < -128 or value_range[1] > 127):
            raise ValueError("Quantizer with output_dtype='int8' requires value_range to be "
                             "within the interval [-128, 127]. Received: "
                             f"value_range={value_range}")
        self.value_range = value_range
        self.epsilon = epsilon

    def __call__(self, x, axis=None, to_numpy=False):
        axis = axis if axis is not None else (self.axis if self.axis is not None else -1)
        return abs_max_quantize(x, axis, self.value_range, self.output_dtype, self.epsilon,
                                to_numpy)

    def is_default(self):
        """Whether this quantizer computes what fkeras's fused int8 kernels compute."""
        return (tuple(self.value_range) == (-127, 127) and float(self.epsilon) == 1e-7
                and self.output_dtype == "int8")

    def get_config(self):
        return {"value_range": self.value_range, "epsilon": self.epsilon,
                "output_dtype": self.output_dtype}


def quantize_and_dequantize(inputs, scale, quantized_dtype, compute_dtype):
    """`cast(clip(inputs / scale, -max, max), quantized_dtype) * scale` (Keras 3), where max is
    the largest finite value of `quantized_dtype` (a float8 type in Keras: fkeras has none,
    so only integer types are accepted here)."""
    dtype = np.dtype(quantized_dtype) if quantized_dtype in ("int8", "int16", "int32") else None
    if dtype is None:
        raise ValueError(f"quantize_and_dequantize: fkeras has no {quantized_dtype!r} dtype; "
                         "only integer quantized dtypes (int8, int16, int32) are supported. "
                         f"Received: quantized_dtype={quantized_dtype}")
    if compute_dtype != "float32":
        raise ValueError("quantize_and_dequantize: fkeras computes in float32. Received: "
                         f"compute_dtype={compute_dtype}")
    x, s = _float32(inputs), _float32(scale)
    top = np.float32(np.iinfo(dtype).max)
    codes = np.clip(x / s, -top, top).astype(dtype)  # a cast truncates toward zero, as Keras's
    return ops.convert_to_tensor(codes.astype(np.float32) * s)
