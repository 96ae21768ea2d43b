"""Shared helpers for the bf16-products tests (runtime flag fkeras._C.set_gemm_bf16).

With the flag set and gemm_bf16_native() True, every GEMM-based product rounds both operands
to bf16 (round to nearest even, NaN kept) and accumulates in fp32; elsewhere the flag changes
nothing. References: float64 NumPy on the operands rounded by `rne`, with a tolerance of
2**-21 of the absolute-value product (fp32 accumulation of exact bf16 products), and a check
that the result is FAR from the unrounded product (so a silently fp32 path fails).
"""

import contextlib

import numpy as np
import pytest
from fkeras import _C

NATIVE = _C.gemm_bf16_native()
needs_native = pytest.mark.skipif(not NATIVE, reason="no avx512_bf16 (VDPBF16PS) on this CPU")
TOL = 2.0**-21


def rne(x):
    """float32 -> the nearest bf16 (ties to even) as float32; NaN stays NaN."""
    x = np.ascontiguousarray(x, np.float32)
    u = x.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), x, r)


def low_bits(x):
    """x with mantissa bits 12..14 set: bf16 rounding moves every element by about 2**-9."""
    x = np.ascontiguousarray(x, np.float32)
    return (x.view(np.uint32) | np.uint32(0x7000)).view(np.float32)


@contextlib.contextmanager
def bf16(enabled=True):
    """Sets this thread's bf16 flag for the block, then restores the previous value."""
    before = _C.set_gemm_bf16(enabled)
    try:
        yield
    finally:
        _C.set_gemm_bf16(before)


@contextlib.contextmanager
def threads(n):
    before = _C.num_threads()
    _C.set_num_threads(n)
    try:
        yield
    finally:
        _C.set_num_threads(before)


def assert_bf16_close(actual, expected, bound, name="output", slack=None):
    """|actual - expected| <= TOL * bound + slack (slack: the fp32 epilogue's own rounding)."""
    actual = np.asarray(actual, np.float64)
    expected = np.asarray(expected, np.float64)
    assert actual.shape == expected.shape, f"{name}: shape {actual.shape} != {expected.shape}"
    assert np.isfinite(actual).all(), f"{name}: non-finite values in the result"
    tol = TOL * bound + (2.0**-22 * np.abs(expected) + 1e-30 if slack is None else slack)
    err = np.abs(actual - expected)
    if not (err <= tol).all():
        i = np.unravel_index(np.argmax(err - tol), err.shape)
        raise AssertionError(f"{name}: error {err[i]:.3g} > tolerance {tol[i]:.3g} at {i}: got "
                             f"{actual[i]!r}, expected {expected[i]!r}")


def assert_far(actual, unrounded, bound, name="output"):
    """Some element differs from the unrounded (fp32-exact) result by far more than TOL allows."""
    rel = np.abs(np.asarray(actual, np.float64) - unrounded) / (bound + 1e-30)
    assert rel.max() > 64 * TOL, (f"{name}: within {rel.max():.3g} of the unrounded product: "
                                  "the bf16 path was not used")
