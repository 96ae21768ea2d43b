"""bf16 products through the GEMM driver (fkeras._C.set_gemm_bf16): gemm in every layout and
size class (direct, packed, split-K, edge tiles, odd K), alpha/beta, the prepacked B of the RNN
kernels, GEMMs inside a parallel region, Dense forward/backward with bias and activations,
NaN/Inf propagation; the flag's thread-locality; and the fallback: where VDPBF16PS is absent
or the ISA is not avx512, the flag gives results bit-identical to fp32.
"""

import itertools
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from bf16_testing import (NATIVE, assert_bf16_close, assert_far, bf16, low_bits, needs_native,
                          rne, threads)
from fkeras import _C
from fkeras.backend import codes
from kernel_testing import nans, rand

LAYOUTS = list(itertools.product([False, True], repeat=2))
# Direct (small), packed, tile edges (8 x 48, K blocks of 512), odd K, long K (split-K), and
# 1000-wide operands.
SHAPES = [(1, 1, 1), (1, 7, 33), (7, 33, 1), (7, 33, 5), (33, 100, 257), (100, 257, 33),
          (8, 48, 512), (9, 49, 513), (16, 96, 1024), (17, 97, 1025), (257, 1000, 100),
          (1000, 33, 7), (1, 1000, 257), (5, 3, 4000), (130, 200, 700),
          (40, 100, 2501)]  # 15 tiles, long odd K: split K under bf16 only


def op(X, trans):
    X = np.asarray(X, np.float64)
    return X.T if trans else X


def operands(rng, M, N, K, ta, tb, scale=1.0):
    A = rand(rng, (K, M) if ta else (M, K), scale)
    B = rand(rng, (N, K) if tb else (K, N), scale)
    return A, B


def reference(A, B, ta, tb):
    """(rounded product, its |A| @ |B| bound, unrounded product) in float64."""
    a, b = op(rne(A), ta), op(rne(B), tb)
    return a @ b, np.abs(a) @ np.abs(b), op(A, ta) @ op(B, tb)


@needs_native
@pytest.mark.parametrize("ta,tb", LAYOUTS)
@pytest.mark.parametrize("M,N,K", SHAPES)
def test_gemm_bf16_matches_rounded_reference(M, N, K, ta, tb):
    rng = np.random.default_rng(M * 1000 + N + K)
    A, B = operands(rng, M, N, K, ta, tb)
    C = nans((M, N))
    with bf16():
        _C.gemm(C, A, B, M, N, K, ta, tb, 1.0, 0.0)
    want, bound, _ = reference(A, B, ta, tb)
    assert_bf16_close(C, want, bound, "C")
    # Low mantissa bits set: rounding moves each operand by ~2**-9, far beyond the tolerance.
    A, B = low_bits(A), low_bits(B)
    with bf16():
        _C.gemm(C, A, B, M, N, K, ta, tb, 1.0, 0.0)
    want, bound, unrounded = reference(A, B, ta, tb)
    assert_bf16_close(C, want, bound, "C (low bits)")
    assert_far(C, unrounded, bound, "C (low bits)")


@needs_native
@pytest.mark.parametrize("M,N,K,ta,tb", [(7, 33, 5, False, True), (130, 200, 700, True, False),
                                         (1, 1000, 257, False, False)])
@pytest.mark.parametrize("alpha,beta", [(-0.5, 1.0), (2.0, 0.25), (1.0, 1.0)])
def test_gemm_bf16_alpha_beta_stay_fp32(M, N, K, ta, tb, alpha, beta):
    # alpha, beta and C are fp32 (not rounded): only the product's operands are.
    rng = np.random.default_rng(K)
    A, B = operands(rng, M, N, K, ta, tb)
    C0 = low_bits(rand(rng, (M, N)))
    C = C0.copy()
    with bf16():
        _C.gemm(C, A, B, M, N, K, ta, tb, alpha, beta)
    want, bound, _ = reference(A, B, ta, tb)
    c0 = C0.astype(np.float64)
    assert_bf16_close(C, alpha * want + beta * c0, abs(alpha) * bound + abs(beta) * np.abs(c0))


@needs_native
@pytest.mark.parametrize("ta,tb", LAYOUTS)
def test_gemm_bf16_nan_inf_propagate(ta, tb):
    # A NaN whose payload is only in the low 16 bits must stay NaN (a plain add-and-truncate
    # rounding turns it into Inf); an Inf in the last k of an odd K meets a real A value, never
    # the zero padding of the last K-pair (0 * Inf would be NaN).
    M, N, K = 9, 50, 33
    rng = np.random.default_rng(3)
    A, B = operands(rng, M, N, K, ta, tb)
    A = A + np.float32(0.5) * np.sign(A)  # no zero A: the Inf column stays Inf
    nan_low = np.array([0x7F800001], np.uint32).view(np.float32)[0]
    (A.T if ta else A)[2, 5] = nan_low
    (B.T if tb else B)[K - 1, 7] = np.inf
    C = nans((M, N))
    with bf16():
        _C.gemm(C, A, B, M, N, K, ta, tb, 1.0, 0.0)
    with np.errstate(invalid="ignore"):
        want = op(rne(A), ta) @ op(rne(B), tb)
    np.testing.assert_array_equal(np.isnan(C), np.isnan(want))
    assert np.isnan(C[2]).all()
    np.testing.assert_array_equal(np.isposinf(C), np.isposinf(want))
    np.testing.assert_array_equal(np.isneginf(C), np.isneginf(want))
    assert np.isinf(np.delete(C[:, 7], 2)).all()
    finite = np.isfinite(want)
    _, bound, _ = reference(np.nan_to_num(A, nan=0.0), np.nan_to_num(B, posinf=0.0), ta, tb)
    assert_bf16_close(C[finite], want[finite], bound[finite])


@needs_native
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("M,N,K,trans_b", [(1, 1, 1, False), (7, 17, 5, True),
                                           (64, 512, 161, False), (300, 65, 300, True),
                                           (97, 1100, 70, False)])
def test_gemm_prepacked_bf16(n_threads, M, N, K, trans_b):
    # B packed once under the flag (the bf16 K-pair layout; 1100 columns: kept by pointer).
    rng = np.random.default_rng(M + N + K)
    A, B = low_bits(rand(rng, (M, K))), low_bits(rand(rng, (N, K) if trans_b else (K, N)))
    C0 = rand(rng, (M, N))
    C = C0.copy()
    with threads(n_threads), bf16():
        _C._gemm_prepacked_for_test(C, A, B, M, N, K, trans_b, 0.5, 2.0, 3)
    want, bound, unrounded = reference(A, B, False, trans_b)
    c0 = C0.astype(np.float64)
    assert_bf16_close(C, 0.5 * want + 2.0 * c0, 0.5 * bound + 2.0 * np.abs(c0))
    assert_far(C, 0.5 * unrounded + 2.0 * c0, 0.5 * bound + 2.0 * np.abs(c0))


@needs_native
@pytest.mark.parametrize("M,N,K", [(200, 150, 100), (97, 301, 257)])
def test_gemm_bf16_inside_a_parallel_region(M, N, K):
    # The GEMMs run on pool workers: the caller's flag must reach them for the region.
    rng = np.random.default_rng(M)
    batch = 4
    A, B = low_bits(rand(rng, (batch, M, K))), low_bits(rand(rng, (batch, K, N)))
    C = nans((batch, M, N))
    with threads(2), bf16():
        _C._gemm_in_region_for_test(C, A, B, batch, M, N, K)
    assert not _C.gemm_bf16()
    for i in range(batch):
        want, bound, unrounded = reference(A[i], B[i], False, False)
        assert_bf16_close(C[i], want, bound, f"C[{i}]")
        assert_far(C[i], unrounded, bound, f"C[{i}]")


@pytest.mark.parametrize("M, N, K", [(300, 400, 600),
                                     (64, 128, 4100)])  # long K, few tiles: split K (bf16)
def test_gemm_bf16_same_result_for_every_thread_count(M, N, K):
    rng = np.random.default_rng(5)
    A, B = rand(rng, (M, K)), rand(rng, (K, N))
    results = []
    for n in (1, 2, 3):
        C = nans((M, N))
        with threads(n), bf16():
            _C.gemm(C, A, B, M, N, K, False, False, 1.0, 0.0)
        results.append(C)
    for C in results[1:]:
        np.testing.assert_array_equal(C, results[0])


# ---- Dense -------------------------------------------------------------------------------------

ACTS = [("linear", 0.0), ("relu", 0.0), ("leaky_relu", 0.2), ("sigmoid", 0.0), ("tanh", 0.0)]


def act64(z, name, alpha):
    if name == "relu":
        return np.maximum(z, 0.0)
    if name == "leaky_relu":
        return np.where(z > 0, z, alpha * z)
    if name == "sigmoid":
        return 1.0 / (1.0 + np.exp(-z))
    if name == "tanh":
        return np.tanh(z)
    return z


@needs_native
@pytest.mark.parametrize("name,alpha", ACTS)
@pytest.mark.parametrize("M,N,K", [(1, 10, 7), (33, 100, 257), (128, 300, 784)])
def test_dense_forward_bf16(M, N, K, name, alpha):
    # Bias and activation are the fp32 epilogue, after the bf16 product.
    rng = np.random.default_rng(N + K)
    x, w = low_bits(rand(rng, (M, K))), low_bits(rand(rng, (K, N), 0.1))
    bias = low_bits(rand(rng, (N,)))
    y = nans((M, N))
    with bf16():
        _C.dense_forward(y, x, w, bias, M, N, K, codes.ACTIVATION_CODES[name], alpha)
    want, bound, unrounded = reference(x, w, False, False)
    b = bias.astype(np.float64)
    # The activations are 1-Lipschitz (leaky: slope < 1): the product's tolerance carries over.
    assert_bf16_close(y, act64(want + b, name, alpha), bound + np.abs(b),
                      slack=2.0**-21 * (np.abs(want + b) + 1.0))
    if name == "linear":
        assert_far(y, unrounded + b, bound + np.abs(b))


@needs_native
@pytest.mark.parametrize("M,N,K", [(1, 10, 7), (64, 160, 512), (128, 300, 784)])
def test_dense_backward_bf16(M, N, K):
    # relu: dz = dy * (y > 0) is exact, so the reference rounds the same dz the kernel does.
    rng = np.random.default_rng(M + N)
    x, w = low_bits(rand(rng, (M, K))), low_bits(rand(rng, (K, N)))
    y, dy = rand(rng, (M, N)), low_bits(rand(rng, (M, N)))
    y[y < 0] = 0.0
    dx, dw, db = nans((M, K)), nans((K, N)), nans((N,))
    with bf16():
        _C.dense_backward(dx, dw, db, dy, x, y, w, M, N, K, codes.ACTIVATION_CODES["relu"], 0.0)
    dz = np.where(y > 0, dy, np.float32(0.0)).astype(np.float32)
    want, bound, unrounded = reference(dz, w, False, True)
    assert_bf16_close(dx, want, bound, "dx")
    assert_far(dx, unrounded, bound, "dx")
    want, bound, unrounded = reference(x, dz, True, False)
    assert_bf16_close(dw, want, bound, "dkernel")
    assert_far(dw, unrounded, bound, "dkernel")
    # dbias is a sum, not a product: fp32 as without the flag.
    np.testing.assert_allclose(db, dz.astype(np.float64).sum(0), rtol=1e-5, atol=1e-5)


# ---- the flag itself ---------------------------------------------------------------------------


def test_flag_is_thread_local_and_returns_the_previous_value():
    assert _C.gemm_bf16() is False
    seen = {}

    def other():
        seen["start"] = _C.gemm_bf16()
        seen["prev"] = _C.set_gemm_bf16(True)
        seen["after"] = _C.gemm_bf16()

    try:
        assert _C.set_gemm_bf16(True) is False
        assert _C.set_gemm_bf16(True) is True
        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert _C.gemm_bf16() is True
    finally:
        assert _C.set_gemm_bf16(False) is True
    assert seen == {"start": False, "prev": False, "after": True}
    assert _C.gemm_bf16() is False


def test_native_means_avx512_bf16_and_the_avx512_isa():
    assert "avx512_bf16" in _C.cpu_features()
    assert NATIVE == (_C.cpu_features()["avx512_bf16"] and _C.cpu_isa() == "avx512")


FALLBACK_ISAS = [i for i in ("scalar", "avx2", "avx512") if _C.isa_supported(i)
                 and not (i == "avx512" and NATIVE)]


def run_products(M, N, K, seed):
    """gemm in all four layouts and dense forward + backward, as a list of outputs."""
    rng = np.random.default_rng(seed)
    out = []
    for ta, tb in LAYOUTS:
        A, B = operands(rng, M, N, K, ta, tb)
        C = nans((M, N))
        _C.gemm(C, A, B, M, N, K, ta, tb, 1.0, 0.0)
        out.append(C)
    x, w, b = rand(rng, (M, K)), rand(rng, (K, N)), rand(rng, (N,))
    y = nans((M, N))
    _C.dense_forward(y, x, w, b, M, N, K, codes.ACTIVATION_CODES["relu"], 0.0)
    dx, dw, db = nans((M, K)), nans((K, N)), nans((N,))
    _C.dense_backward(dx, dw, db, rand(rng, (M, N)), x, y, w, M, N, K,
                      codes.ACTIVATION_CODES["relu"], 0.0)
    return out + [y, dx, dw, db]


@pytest.mark.parametrize("isa_name", FALLBACK_ISAS)
@pytest.mark.parametrize("M,N,K", [(1, 1, 1), (33, 100, 257), (200, 150, 600)])
def test_flag_without_native_is_bit_identical_fp32(isa_name, M, N, K):
    before = _C.cpu_isa()
    try:
        _C.set_cpu_isa(isa_name)
        assert not _C.gemm_bf16_native()
        plain = run_products(M, N, K, 7)
        with bf16():
            flagged = run_products(M, N, K, 7)
    finally:
        _C.set_cpu_isa(before)
    for p, f in zip(plain, flagged):
        np.testing.assert_array_equal(f, p)


@pytest.mark.skipif(not _C.isa_supported("avx2"), reason="no AVX2 on this CPU")
def test_env_isa_avx2_turns_the_bf16_path_off():
    code = ("import numpy as np\nfrom fkeras import _C\n"
            "assert _C.cpu_isa() == 'avx2' and not _C.gemm_bf16_native()\n"
            "rng = np.random.default_rng(0)\n"
            "A, B = rng.standard_normal((2, 50, 50)).astype(np.float32)\n"
            "C0, C1 = np.empty((50, 50), np.float32), np.empty((50, 50), np.float32)\n"
            "_C.gemm(C0, A, B, 50, 50, 50, False, False, 1.0, 0.0)\n"
            "_C.set_gemm_bf16(True)\n"
            "_C.gemm(C1, A, B, 50, 50, 50, False, False, 1.0, 0.0)\n"
            "assert (C0 == C1).all()\nprint('ok')\n")
    env = dict(os.environ, FKERAS_CPU_ISA="avx2")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


@needs_native
@pytest.mark.parametrize("M,N,K,ta,tb", [(1, 1, 1, False, False), (9, 49, 513, True, True),
                                         (17, 97, 33, False, True), (130, 200, 700, True, False)])
def test_gemm_bf16_writes_only_its_output(M, N, K, ta, tb):
    # C is rows 1..M of a larger buffer: the canary rows around it must stay untouched (the
    # epilogue's masked stores on the right edge, packing that reads past an operand's edge).
    rng = np.random.default_rng(M + K)
    A, B = operands(rng, M, N, K, ta, tb)
    big = np.full((M + 2, N), 1234.5, np.float32)
    with bf16():
        _C.gemm(big[1:M + 1], A, B, M, N, K, ta, tb, 1.0, 0.0)
    assert (big[0] == 1234.5).all() and (big[M + 1] == 1234.5).all()
    want, bound, _ = reference(A, B, ta, tb)
    assert_bf16_close(big[1:M + 1], want, bound)
