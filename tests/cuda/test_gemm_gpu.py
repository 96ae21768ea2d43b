"""CUDA gemm / dense_forward / dense_backward (fkeras._C_cuda) against the CPU kernels
(fkeras._C) on random shapes incl. edge sizes and non-multiples of the 128 x 128 x 8 tiles,
outputs pre-filled with NaN, exact FP32 and TF32 ("high" precision) within TF32 tolerance.
Skipped without a GPU (the `cuda` marker, tests/conftest.py)."""

import itertools

import numpy as np
import pytest
from fkeras import _C
from fkeras.backend import codes
from fkeras.backend.reference import activation_math

pytestmark = pytest.mark.cuda

SHAPES = [(1, 1, 1), (7, 33, 1), (33, 7, 1000), (1000, 33, 7), (128, 128, 8), (129, 127, 9),
          (1, 1000, 33), (257, 300, 130), (64, 1, 5), (5, 3, 0)]
FUSED = activation_math.OUTPUT_DERIVABLE


@pytest.fixture
def G():
    import fkeras._C_cuda as G

    G.set_matmul_precision("highest")
    yield G
    G.set_matmul_precision("highest")


def dev(G, a):
    return G.DeviceArray.from_host(np.ascontiguousarray(a, np.float32))


def nan_dev(G, shape):
    return dev(G, np.full(shape, np.nan, np.float32))


def tol(precision, bound):
    # FP32: 1e-5 relative to the sum of |terms|; TF32 (10-bit mantissa): 2e-3 of it.
    return (1e-5 if precision == "highest" else 2e-3) * bound + 1e-5


@pytest.mark.parametrize("precision", ["highest", "high"])
@pytest.mark.parametrize("trans_a,trans_b", list(itertools.product([False, True], repeat=2)))
def test_gemm_vs_cpu(G, precision, trans_a, trans_b):
    G.set_matmul_precision(precision)
    rng = np.random.default_rng(1)
    for (M, N, K), (alpha, beta) in itertools.product(SHAPES, [(1.0, 0.0), (-0.5, 2.0)]):
        A = rng.standard_normal((K, M) if trans_a else (M, K)).astype(np.float32)
        B = rng.standard_normal((N, K) if trans_b else (K, N)).astype(np.float32)
        C0 = rng.standard_normal((M, N)).astype(np.float32)
        want = np.full((M, N), np.nan, np.float32) if beta == 0 else C0.copy()
        _C.gemm(want, A, B, M, N, K, trans_a, trans_b, alpha, beta)
        Cd = nan_dev(G, (M, N)) if beta == 0 else dev(G, C0)
        G.gemm(Cd, dev(G, A), dev(G, B), M, N, K, trans_a, trans_b, alpha, beta)
        got = Cd.to_host()
        a = np.abs(A.T if trans_a else A).astype(np.float64)
        b = np.abs(B.T if trans_b else B).astype(np.float64)
        bound = abs(alpha) * (a @ b) + abs(beta) * np.abs(C0)
        assert np.isfinite(got).all(), (M, N, K)
        assert (np.abs(got - want) <= tol(precision, bound)).all(), (M, N, K, alpha, beta)


def test_gemm_unaligned_leading_dimensions(G):
    # K = 3, 5 (rows not 16-byte aligned): the scalar fallback of the vector loads.
    rng = np.random.default_rng(2)
    for M, N, K in [(130, 131, 3), (9, 257, 5), (200, 6, 7)]:
        A = rng.standard_normal((M, K)).astype(np.float32)
        B = rng.standard_normal((K, N)).astype(np.float32)
        Cd = nan_dev(G, (M, N))
        G.gemm(Cd, dev(G, A), dev(G, B), M, N, K, False, False, 1.0, 0.0)
        np.testing.assert_allclose(Cd.to_host(), A.astype(np.float64) @ B, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("with_bias", [True, False])
def test_dense_forward_vs_cpu(G, with_bias):
    rng = np.random.default_rng(3)
    for act, (M, N, K) in itertools.product(FUSED, [(1, 1, 1), (33, 50, 17), (130, 129, 300)]):
        alpha = 0.7 if act in (codes.ELU, codes.LEAKY_RELU) else 0.0
        x = rng.standard_normal((M, K)).astype(np.float32)
        w = (rng.standard_normal((K, N)) * K**-0.5).astype(np.float32)
        b = rng.standard_normal(N).astype(np.float32) if with_bias else None
        want = np.full((M, N), np.nan, np.float32)
        _C.dense_forward(want, x, w, b, M, N, K, act, alpha)
        yd = nan_dev(G, (M, N))
        G.dense_forward(yd, dev(G, x), dev(G, w), dev(G, b) if with_bias else None, M, N, K,
                        act, alpha)
        np.testing.assert_allclose(yd.to_host(), want, rtol=1e-5, atol=2e-5)


@pytest.mark.parametrize("outputs", ["xwb", "x", "w", "b"])
def test_dense_backward_vs_cpu(G, outputs):
    rng = np.random.default_rng(4)
    for act, (M, N, K) in itertools.product(FUSED, [(1, 1, 1), (65, 50, 17), (0, 4, 3),
                                                    (130, 70, 200)]):
        alpha = 0.7 if act in (codes.ELU, codes.LEAKY_RELU) else 0.0
        x = rng.standard_normal((M, K)).astype(np.float32)
        w = (rng.standard_normal((K, N)) * K**-0.5).astype(np.float32)
        y = np.empty((M, N), np.float32)
        _C.dense_forward(y, x, w, None, M, N, K, act, alpha)
        dy = rng.standard_normal((M, N)).astype(np.float32)
        shapes = {"x": (M, K), "w": (K, N), "b": (N,)}
        want = {k: (np.full(s, np.nan, np.float32) if k in outputs else None)
                for k, s in shapes.items()}
        _C.dense_backward(want["x"], want["w"], want["b"], dy, x, y, w, M, N, K, act, alpha)
        got = {k: (nan_dev(G, s) if k in outputs else None) for k, s in shapes.items()}
        G.dense_backward(got["x"], got["w"], got["b"], dev(G, dy), dev(G, x), dev(G, y),
                         dev(G, w), M, N, K, act, alpha)
        for k in outputs:
            np.testing.assert_allclose(got[k].to_host(), want[k], rtol=1e-4, atol=1e-4,
                                       err_msg=f"d{k} act={act} {M}x{N}x{K}")


def test_rejects_bad_arguments(G):
    A, B, C = dev(G, np.ones((2, 3))), dev(G, np.ones((3, 4))), dev(G, np.zeros((2, 4)))
    with pytest.raises(ValueError, match="gemm"):
        G.gemm(C, A, B, 2, 4, 5, False, False, 1.0, 0.0)
    with pytest.raises(ValueError, match="share memory"):
        G.gemm(A, A, dev(G, np.ones((3, 3))), 2, 3, 3, False, False, 1.0, 0.0)
    with pytest.raises(ValueError, match="activation"):
        G.dense_forward(C, A, B, None, 2, 4, 3, 99, 0.0)
    with pytest.raises(ValueError, match="precision"):
        G.set_matmul_precision("medium")
