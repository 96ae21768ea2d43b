"""Activation functions and their derivatives in float64: the spec for every activation code.

Shared by the reference kernels that fuse an activation (dense, conv2d, recurrent).
"""

import math

import numpy as np

from fkeras.backend import codes

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _sigmoid(x):
    # exp of a non-positive argument only: no overflow warnings for large |x|.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


_erfc = np.vectorize(math.erfc, otypes=[np.float64])

# GELU tanh approximation: 0.5 (1 + tanh(u)) = sigmoid(2u), u = c (x + 0.044715 x^3).
_GELU_C = math.sqrt(2.0 / math.pi)
_GELU_A = 0.044715


def _phi(x):
    # Phi(x) = erfc(-x / sqrt 2) / 2: no cancellation in the lower tail (1 + erf(x / sqrt 2)
    # loses every digit below x = -8, where float32 GELU values are still normal numbers).
    return 0.5 * _erfc(-x / math.sqrt(2.0))


def _gelu_tanh_v(x):
    """v = 2u and dv/dx for the tanh approximation (inf-free for huge |x|)."""
    with np.errstate(over="ignore"):
        v = 2.0 * _GELU_C * (x + _GELU_A * x**3)
        dv = 2.0 * _GELU_C * (1.0 + 3.0 * _GELU_A * x * x)
    return v, dv


def forward(x, code, alpha=0.0):
    """Returns act(x) for a float64 array x."""
    x = np.asarray(x, dtype=np.float64)
    if code == codes.LINEAR:
        return x.copy()
    if code == codes.RELU:
        return np.maximum(x, 0.0)
    if code == codes.SIGMOID:
        return _sigmoid(x)
    if code == codes.TANH:
        return np.tanh(x)
    if code == codes.ELU:
        return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0.0)))
    if code == codes.SELU:
        return _SELU_SCALE * np.where(x > 0, x, _SELU_ALPHA * np.expm1(np.minimum(x, 0.0)))
    if code == codes.GELU:
        return x * _phi(x)
    if code == codes.GELU_TANH:
        # 0.5 x (1 + tanh(u)) written as x sigmoid(2u): no cancellation for negative x.
        return x * _sigmoid(_gelu_tanh_v(x)[0])
    if code == codes.SOFTPLUS:
        return np.logaddexp(0.0, x)
    if code == codes.SOFTSIGN:
        return x / (1.0 + np.abs(x))
    if code == codes.SWISH:
        return x * _sigmoid(x)
    if code == codes.HARD_SIGMOID:
        return np.clip(x + 3.0, 0.0, 6.0) / 6.0
    if code == codes.EXPONENTIAL:
        return np.exp(x)
    if code == codes.LEAKY_RELU:
        return np.where(x > 0, x, alpha * x)
    raise ValueError(f"unknown activation code {code}")


def derivative(x, y, code, alpha=0.0):
    """Returns act'(x) given the input x and output y = act(x) (float64 arrays)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if code == codes.LINEAR:
        return np.ones_like(x)
    if code == codes.RELU:
        return (x > 0).astype(np.float64)
    if code == codes.SIGMOID:
        return y * (1.0 - y)
    if code == codes.TANH:
        return 1.0 - y * y
    if code == codes.ELU:
        return np.where(x > 0, 1.0, y + alpha)
    if code == codes.SELU:
        return np.where(x > 0, _SELU_SCALE, y + _SELU_SCALE * _SELU_ALPHA)
    if code == codes.GELU:
        return _phi(x) + x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    if code == codes.GELU_TANH:
        # With s = sigmoid(v), v = 2u: d/dx x s = s + x s (1 - s) v', and 1 - s = sigmoid(-v).
        v, dv = _gelu_tanh_v(x)
        s, one_m_s = _sigmoid(v), _sigmoid(-v)
        with np.errstate(invalid="ignore", over="ignore"):
            tail = np.where(s * one_m_s == 0.0, 0.0, x * s * one_m_s * dv)
        return s + tail
    if code == codes.SOFTPLUS:
        return _sigmoid(x)
    if code == codes.SOFTSIGN:
        return 1.0 / (1.0 + np.abs(x)) ** 2
    if code == codes.SWISH:
        s = _sigmoid(x)
        return s * (1.0 + x * (1.0 - s))
    if code == codes.HARD_SIGMOID:
        return np.where((x > -3.0) & (x < 3.0), 1.0 / 6.0, 0.0)
    if code == codes.EXPONENTIAL:
        return y.copy()
    if code == codes.LEAKY_RELU:
        return np.where(x > 0, 1.0, alpha)
    raise ValueError(f"unknown activation code {code}")


# Codes whose derivative is a function of the output alone: the only ones that the fused
# epilogues (dense, conv2d) accept; the recurrent kernels accept the first five.
OUTPUT_DERIVABLE = (
    codes.LINEAR, codes.RELU, codes.SIGMOID, codes.TANH, codes.HARD_SIGMOID,
    codes.ELU, codes.SELU, codes.SOFTPLUS, codes.SOFTSIGN, codes.EXPONENTIAL, codes.LEAKY_RELU,
)


def derivative_from_output(y, code, alpha=0.0):
    """act'(x) from y = act(x) alone, for the codes in OUTPUT_DERIVABLE (alpha >= 0)."""
    y = np.asarray(y, dtype=np.float64)
    if code == codes.LINEAR:
        return np.ones_like(y)
    if code == codes.RELU:
        return (y > 0).astype(np.float64)
    if code == codes.SIGMOID:
        return y * (1.0 - y)
    if code == codes.TANH:
        return 1.0 - y * y
    if code == codes.HARD_SIGMOID:
        return np.where((y > 0.0) & (y < 1.0), 1.0 / 6.0, 0.0)
    if code == codes.ELU:
        return np.where(y > 0, 1.0, y + alpha)
    if code == codes.SELU:
        return np.where(y > 0, _SELU_SCALE, y + _SELU_SCALE * _SELU_ALPHA)
    if code == codes.SOFTPLUS:
        return -np.expm1(-y)
    if code == codes.SOFTSIGN:
        return (1.0 - np.abs(y)) ** 2
    if code == codes.EXPONENTIAL:
        return y.copy()
    if code == codes.LEAKY_RELU:
        return np.where(y > 0, 1.0, alpha)
    raise ValueError(f"activation code {code} cannot be differentiated from its output")
