"""Host build of the CUDA GEMM family's math (fk_cuda/gemm_math.h via fkeras._C_cuda_host):
the kernel's tile walk (tile origins, bounds predicates, op(A)/op(B) offsets with leading
dimensions) against NumPy float64, and the fused epilogue / activation derivative against
NumPy float64 (activation_math) and against the CPU kernels (fkeras._C dense_forward /
dense_backward), which the CUDA results must equal."""

import itertools

import numpy as np
import pytest
from fkeras import _C
from fkeras.backend import codes
from fkeras.backend.reference import activation_math

H = pytest.importorskip("fkeras._C_cuda_host")
FUSED = activation_math.OUTPUT_DERIVABLE


def act_alpha(act):
    return 0.7 if act in (codes.ELU, codes.LEAKY_RELU) else 0.0


def strided(rng, rows, cols, ld):
    """A flat buffer holding a rows x cols matrix with leading dimension ld (NaN padding)."""
    buf = np.full(max(rows * ld, 1), np.nan, np.float32)
    mat = rng.standard_normal((rows, cols)).astype(np.float32)
    for r in range(rows):
        buf[r * ld:r * ld + cols] = mat[r]
    return buf, mat.astype(np.float64)


@pytest.mark.parametrize("trans_a,trans_b", list(itertools.product([False, True], repeat=2)))
@pytest.mark.parametrize("M,N,K", [(1, 1, 1), (7, 33, 5), (33, 7, 17), (9, 10, 0), (20, 19, 21)])
@pytest.mark.parametrize("tiles", [(128, 128, 8), (4, 8, 3), (16, 8, 8)])
def test_tile_walk_equals_numpy(trans_a, trans_b, M, N, K, tiles):
    rng = np.random.default_rng(M * 100 + N * 10 + K)
    ar, ac = (K, M) if trans_a else (M, K)
    br, bc = (N, K) if trans_b else (K, N)
    lda, ldb, ldc = ac + 3, bc + 1, N + 2
    A, a = strided(rng, ar, ac, lda)
    B, b = strided(rng, br, bc, ldb)
    C, c = strided(rng, M, N, ldc)
    bias = rng.standard_normal(N).astype(np.float32)
    opa, opb = (a.T if trans_a else a), (b.T if trans_b else b)
    for alpha, beta, act in [(1.0, 0.0, codes.LINEAR), (0.5, -2.0, codes.LINEAR),
                             (1.0, 1.0, codes.TANH), (0.0, 0.5, codes.RELU)]:
        Cin = C.copy()
        if beta == 0.0:  # beta == 0 never reads C: a NaN there must not propagate
            for r in range(M):
                Cin[r * ldc:r * ldc + N] = np.nan
        got = H.gemm_tiled_reference(Cin, A, B, M, N, K, trans_a, trans_b, alpha, beta, lda, ldb,
                                     ldc, bias, act, 0.0, *tiles)
        z = alpha * (opa @ opb) + (beta * c if beta != 0.0 else 0.0) + bias.astype(np.float64)
        want = activation_math.forward(z, act)
        for r in range(M):
            row = got[r * ldc:r * ldc + N]
            np.testing.assert_allclose(row, want[r], rtol=1e-5, atol=1e-5)
            # the padding between rows of C is never written
            pad = got[r * ldc + N:(r + 1) * ldc]
            np.testing.assert_array_equal(pad, Cin[r * ldc + N:(r + 1) * ldc])


@pytest.mark.parametrize("act", FUSED)
def test_activation_equals_numpy_and_cpu_kernel(act):
    rng = np.random.default_rng(act)
    x = np.concatenate([rng.standard_normal(500) * 4, [0.0, -0.0, 1e-8, -30.0, 30.0, np.nan]])
    x = x.astype(np.float32)
    alpha = act_alpha(act)
    got = H.gemm_activation(x, act, alpha)
    want = activation_math.forward(x.astype(np.float64), act, alpha)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7, equal_nan=True)
    # CPU fused Dense epilogue, K == 1 and x == 1 so that y = act(kernel) exactly
    n = x.size
    y = np.full((1, n), np.nan, np.float32)
    _C.dense_forward(y, np.ones((1, 1), np.float32), x.reshape(1, n), None, 1, n, 1, act, alpha)
    np.testing.assert_allclose(got, y[0], rtol=2e-6, atol=1e-7, equal_nan=True)


@pytest.mark.parametrize("act", FUSED)
def test_dz_equals_numpy_and_cpu_kernel(act):
    rng = np.random.default_rng(100 + act)
    alpha = act_alpha(act)
    y = H.gemm_activation((rng.standard_normal(300) * 3).astype(np.float32), act, alpha)
    dy = rng.standard_normal(300).astype(np.float32)
    got = H.gemm_dz(dy, y, act, alpha)
    want = dy * activation_math.derivative_from_output(y.astype(np.float64), act, alpha)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # CPU dense_backward with N == K == 1 and kernel 1: dx = dz exactly
    M = y.size
    dx = np.full((M, 1), np.nan, np.float32)
    _C.dense_backward(dx, None, None, dy.reshape(M, 1), np.ones((M, 1), np.float32),
                      y.reshape(M, 1), np.ones((1, 1), np.float32), M, 1, 1, act, alpha)
    np.testing.assert_allclose(got, dx[:, 0], rtol=1e-6, atol=1e-7)


def test_epilogue_never_reads_c_when_beta_is_zero():
    acc = np.array([1.0, -2.0, 3.0], np.float32)
    c = np.full(3, np.nan, np.float32)
    bias = np.array([0.5, 0.5, -0.5], np.float32)
    got = H.gemm_epilogue(acc, c, 2.0, 0.0, bias, codes.RELU, 0.0)
    np.testing.assert_array_equal(got, [2.5, 0.0, 5.5])
    got = H.gemm_epilogue(acc, np.ones(3, np.float32), 2.0, 1.0, bias, codes.LINEAR, 0.0)
    np.testing.assert_array_equal(got, [3.5, -2.5, 6.5])
    assert np.isnan(H.gemm_epilogue(acc, c, 2.0, 1.0, bias, codes.LINEAR, 0.0)).all()
