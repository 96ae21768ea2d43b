"""The one-row GEMM path (cpp/gemm/gemm_row.h: M == 1, B not transposed), on every ISA: the same
bits as that row computed inside a batch by the blocked GEMM (so a batch-1 call equals the row
of a batched one), against the float64 reference, for every fused epilogue, on column-group
and reduction-block edges, serial and threaded."""

import itertools

import numpy as np
import pytest
from fkeras import _C
from fkeras.backend.reference import activation_math
from fkeras.backend.reference import gemm as ref
from kernel_testing import assert_close, nans, rand

FUSED = activation_math.OUTPUT_DERIVABLE
# Columns around the vector (8, 16) and group (64, 128) widths; K around the 256 block.
NS = (1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 127, 128, 129, 300, 513)
KS = (1, 3, 255, 256, 257, 600)
BATCH, ROW = 64, 5  # a batch the blocked GEMM runs without splitting K; the row compared


def _alpha(act):
    from fkeras.backend import codes

    return 0.2 if act == codes.LEAKY_RELU else 1.0 if act == codes.ELU else 0.0


def _dense_pair(rng, N, K, act, with_bias):
    x, w = rand(rng, (BATCH, K)), rand(rng, (K, N), K**-0.5)
    b = rand(rng, (N,)) if with_bias else None
    batched, single = nans((BATCH, N)), nans((1, N))
    _C.dense_forward(batched, x, w, b, BATCH, N, K, act, _alpha(act))
    _C.dense_forward(single, x[ROW:ROW + 1], w, b, 1, N, K, act, _alpha(act))
    return x, w, b, batched, single


@pytest.mark.parametrize("with_bias", [True, False])
def test_dense_row_equals_the_batched_row_for_every_epilogue(isa, with_bias):
    rng = np.random.default_rng(11)
    for act, (N, K) in itertools.product(FUSED, [(1, 1), (17, 3), (129, 257), (300, 600)]):
        x, w, b, batched, single = _dense_pair(rng, N, K, act, with_bias)
        np.testing.assert_array_equal(single[0], batched[ROW], err_msg=f"act={act} {N}x{K}")
        expected = np.empty((1, N))
        ref.dense_forward(expected, x[ROW:ROW + 1], w, b, 1, N, K, act, _alpha(act))
        assert_close(single, expected, rtol=1e-5, atol=2e-5, name=f"act={act} {N}x{K}")


def test_gemm_row_edges(isa):
    rng = np.random.default_rng(12)
    for N, K in itertools.product(NS, KS):
        A, B = rand(rng, (BATCH, K)), rand(rng, (K, N))
        for alpha, beta in [(1.0, 0.0), (-0.5, 1.0), (2.0, 0.25)]:
            C0 = rand(rng, (BATCH, N))
            batched = nans((BATCH, N)) if beta == 0.0 else C0.copy()
            single = nans((1, N)) if beta == 0.0 else C0[ROW:ROW + 1].copy()
            _C.gemm(batched, A, B, BATCH, N, K, False, False, alpha, beta)
            _C.gemm(single, A[ROW:ROW + 1], B, 1, N, K, False, False, alpha, beta)
            np.testing.assert_array_equal(single[0], batched[ROW],
                                          err_msg=f"N={N} K={K} alpha={alpha} beta={beta}")
            expected = np.full((1, N), np.nan) if beta == 0.0 else \
                C0[ROW:ROW + 1].astype(np.float64)
            ref.gemm(expected, A[ROW:ROW + 1], B, 1, N, K, False, False, alpha, beta)
            assert_close(single, expected, rtol=1e-4, atol=1e-4 * np.sqrt(K),
                         name=f"N={N} K={K}")


def test_gemm_row_with_transposed_a(isa):
    rng = np.random.default_rng(13)
    for N, K in [(1, 1), (65, 257), (300, 40)]:
        At, B = rand(rng, (K, 1)), rand(rng, (K, N))
        single = nans((1, N))
        _C.gemm(single, At, B, 1, N, K, True, False, 1.0, 0.0)
        plain = nans((1, N))
        _C.gemm(plain, np.ascontiguousarray(At.T), B, 1, N, K, False, False, 1.0, 0.0)
        np.testing.assert_array_equal(single, plain)


@pytest.mark.parametrize("N,K", [(128, 9216), (512, 1100), (1000, 700), (20, 30000)])
def test_large_rows_are_the_same_for_every_thread_count(isa, N, K):
    rng = np.random.default_rng(14)
    x, w, b = rand(rng, (1, K)), rand(rng, (K, N), K**-0.5), rand(rng, (N,))
    before = _C.num_threads()
    results = []
    try:
        for threads in (1, 2, 3):
            _C.set_num_threads(threads)
            y = nans((1, N))
            _C.dense_forward(y, x, w, b, 1, N, K, 1, 0.0)  # relu
            results.append(y)
    finally:
        _C.set_num_threads(before)
    for y in results[1:]:
        np.testing.assert_array_equal(y, results[0])
    expected = np.empty((1, N))
    ref.dense_forward(expected, x, w, b, 1, N, K, 1, 0.0)
    assert_close(results[0], expected, rtol=1e-4, atol=1e-4)
