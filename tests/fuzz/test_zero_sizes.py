"""Every kernel with each of its sizes set to 0 in turn (the others moderate, above the
16-channel blocks and SIMD widths), on 1 and 3 threads: no crash, no division by zero, no
write outside the outputs, and the reference's result (empty outputs, zeros for sums over an
empty set, beta * C for a GEMM with K = 0, and so on).

The sizes come from the fuzz generators (cases.py), with their `dim` replaced by one that
returns 0 at the i-th call and a fixed size otherwise.
"""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cases  # noqa: E402
from harness import run_case  # noqa: E402

from fkeras import _C  # noqa: E402


class ForcedDims:
    """A stand-in for cases.dim: 0 at call `zero_at` (unless that size may not be 0: `zero`
    is 0 there), else min(hi, size)."""

    def __init__(self, zero_at, size=33):
        self.zero_at, self.size, self.calls = zero_at, size, 0

    def __call__(self, rng, hi, zero=0.1):
        i, self.calls = self.calls, self.calls + 1
        return 0 if i == self.zero_at and zero > 0 else min(hi, self.size)


def size_count(kernel, seed):
    forced = ForcedDims(-1)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cases, "dim", forced)
        cases.GENERATORS[kernel](np.random.default_rng(seed))
    return forced.calls


@pytest.fixture
def threads():
    before = _C.num_threads()
    yield
    _C.set_num_threads(before)


@pytest.mark.parametrize("kernel", sorted(cases.GENERATORS))
def test_each_size_zero(kernel, threads, monkeypatch):
    seed = 7
    n = size_count(kernel, seed)
    assert n >= 1
    for zero_at in range(n):
        for t in (1, 3):
            _C.set_num_threads(t)
            monkeypatch.setattr(cases, "dim", ForcedDims(zero_at))
            rng = np.random.default_rng(seed)
            case = cases.GENERATORS[kernel](rng)
            assert run_case(case, rng) in ("ok", "refused"), kernel


@pytest.mark.parametrize("beta", [0.0, 1.0, -0.5])
@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, True)])
def test_gemm_with_an_empty_reduction_is_beta_c(threads, beta, trans_a, trans_b):
    # K = 0: C = beta * C, and beta = 0 ignores C's contents (NaN does not leak).
    _C.set_num_threads(3)
    M, N = 67, 130
    C0 = np.random.default_rng(0).standard_normal((M, N)).astype(np.float32)
    C = C0.copy() if beta else np.full((M, N), np.nan, np.float32)
    A = np.zeros((0, M) if trans_a else (M, 0), np.float32)
    B = np.zeros((N, 0) if trans_b else (0, N), np.float32)
    _C.gemm(C, A, B, M, N, 0, trans_a, trans_b, 2.0, beta)
    np.testing.assert_array_equal(C, beta * C0 if beta else np.zeros((M, N), np.float32))
