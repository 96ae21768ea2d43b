"""GEMM and Dense kernels: the reference against NumPy float64, the compiled kernels (every ISA
path) against the reference on edge-size sweeps, a checksum test on larger shapes, Dense
forward/backward for every fused activation, finite differences for the reference backward,
and argument validation.

Tolerances: a float32 dot product of length K has a rounding error that scales with
sum_k |a_ik b_kj| (the product of absolute values), not with the result, which can cancel to
near zero; so GEMM results are checked against 1e-5 relative plus 1e-6 of that bound.
"""

import itertools

import numpy as np
import pytest
from fkeras import _C
from fkeras.backend import codes
from fkeras.backend.reference import activation_math
from fkeras.backend.reference import gemm as ref
from kernel_testing import assert_close, check_vjp, nans, rand

SIZES = (0, 1, 2, 3, 5, 7, 8, 13, 15, 16, 17, 31, 32, 33, 47, 48, 49, 63, 64, 65, 100, 127, 129,
         200)
FUSED = activation_math.OUTPUT_DERIVABLE


def operands(rng, M, N, K, trans_a, trans_b):
    A = rand(rng, (K, M) if trans_a else (M, K))
    B = rand(rng, (N, K) if trans_b else (K, N))
    return A, B


def op64(X, trans):
    X = np.asarray(X, np.float64)
    return X.T if trans else X


def assert_gemm_close(C, expected, bound, name="C"):
    """|C - expected| <= 1e-5 |expected| + 1e-6 bound + 1e-6 (bound: sum of |terms|)."""
    C = np.asarray(C, np.float64)
    assert np.isfinite(C).all(), f"{name}: non-finite values in the result"
    err = np.abs(C - expected)
    tol = 1e-5 * np.abs(expected) + 1e-6 * bound + 1e-6
    if not (err <= tol).all():
        i = np.unravel_index(np.argmax(err - tol), err.shape)
        raise AssertionError(f"{name}: error {err[i]:.3g} > tolerance {tol[i]:.3g} at {i}: "
                             f"got {C[i]!r}, expected {expected[i]!r}")


def run_gemm(rng, M, N, K, trans_a, trans_b, alpha, beta):
    """Runs the compiled gemm; returns (C, reference C, bound)."""
    A, B = operands(rng, M, N, K, trans_a, trans_b)
    C0 = rand(rng, (M, N))
    C = nans((M, N)) if beta == 0.0 else C0.copy()
    _C.gemm(C, A, B, M, N, K, trans_a, trans_b, alpha, beta)
    expected = np.full((M, N), np.nan) if beta == 0.0 else C0.astype(np.float64)
    ref.gemm(expected, A, B, M, N, K, trans_a, trans_b, alpha, beta)
    bound = abs(alpha) * np.abs(op64(A, trans_a)) @ np.abs(op64(B, trans_b))
    bound = bound + abs(beta) * np.abs(C0.astype(np.float64))
    return C, expected, bound


# ---- the reference ---------------------------------------------------------------------------


@pytest.mark.parametrize("trans_a,trans_b", list(itertools.product([False, True], repeat=2)))
@pytest.mark.parametrize("alpha,beta", [(1.0, 0.0), (-0.5, 1.0), (2.0, 0.25)])
def test_reference_gemm_matches_numpy(trans_a, trans_b, alpha, beta):
    rng = np.random.default_rng(0)
    M, N, K = 7, 5, 9
    A = rng.standard_normal((K, M) if trans_a else (M, K))
    B = rng.standard_normal((N, K) if trans_b else (K, N))
    C0 = rng.standard_normal((M, N))
    C = C0.copy() if beta else np.full((M, N), np.nan)
    ref.gemm(C, A, B, M, N, K, trans_a, trans_b, alpha, beta)
    # An independent formulation: explicit sums over k.
    a = A.T if trans_a else A
    b = B.T if trans_b else B
    expected = alpha * np.einsum("ik,kj->ij", a, b) + (beta * C0 if beta else 0.0)
    np.testing.assert_allclose(C, expected, rtol=1e-12, atol=1e-12)


def test_reference_dense_backward_finite_differences():
    rng = np.random.default_rng(1)
    M, N, K = 4, 3, 5
    for act in FUSED:
        alpha = 0.3 if act in (codes.ELU, codes.LEAKY_RELU) else 0.0
        while True:  # pre-activations away from the kinks (0, +-3), where differences fail
            x = rng.standard_normal((M, K))
            w = rng.standard_normal((K, N))
            b = rng.standard_normal(N)
            z = np.abs(x @ w + b)
            if z.min() > 0.01 and np.abs(z - 3.0).min() > 0.01:
                break

        def f(inp, act=act, alpha=alpha):
            y = np.empty((M, N))
            ref.dense_forward(y, inp["x"], inp["w"], inp["b"], M, N, K, act, alpha)
            return {"y": y}

        inputs = {"x": x, "w": w, "b": b}
        y = f(inputs)["y"]
        dy = rng.standard_normal((M, N))
        dx, dw, db = np.empty((M, K)), np.empty((K, N)), np.empty(N)
        ref.dense_backward(dx, dw, db, dy, x, y, w, M, N, K, act, alpha)
        check_vjp(f, inputs, {"y": dy}, {"x": dx, "w": dw, "b": db}, rtol=1e-5, atol=1e-7)


# ---- compiled gemm against the reference, on every ISA path -----------------------------------


@pytest.mark.parametrize("trans_a,trans_b", list(itertools.product([False, True], repeat=2)))
def test_gemm_transposes_alpha_beta(isa, trans_a, trans_b):
    rng = np.random.default_rng(2)
    for (M, N, K), (alpha, beta) in itertools.product(
        [(13, 17, 31), (64, 65, 33), (9, 100, 129)],
        [(1.0, 0.0), (1.0, 1.0), (-0.5, 0.25), (2.0, 0.0), (0.0, 0.5), (0.0, 0.0)],
    ):
        C, expected, bound = run_gemm(rng, M, N, K, trans_a, trans_b, alpha, beta)
        assert_gemm_close(C, expected, bound, f"C {M}x{N}x{K} alpha={alpha} beta={beta}")


def test_gemm_beta_one_accumulates(isa):
    rng = np.random.default_rng(3)
    M, N, K = 33, 47, 65
    A, B = operands(rng, M, N, K, False, True)
    C = np.zeros((M, N), np.float32)
    for _ in range(3):
        _C.gemm(C, A, B, M, N, K, False, True, 1.0, 1.0)
    expected = 3.0 * (op64(A, False) @ op64(B, True))
    assert_gemm_close(C, expected, 3.0 * np.abs(A).astype(np.float64) @ np.abs(B.T))


def test_gemm_size_sweep(isa):
    rng = np.random.default_rng(4)
    shapes = {(m, n, k) for m in SIZES for n in (0, 1) for k in (1, 17)}  # the degenerate edges
    shapes |= {(1, n, k) for n in SIZES for k in (0, 1, 64)}
    while len(shapes) < 160:
        shapes.add(tuple(int(rng.choice(SIZES)) for _ in range(3)))
    for i, (M, N, K) in enumerate(sorted(shapes)):
        trans_a, trans_b = bool(i & 1), bool(i & 2)
        beta = (0.0, 1.0, 0.5)[i % 3]
        C, expected, bound = run_gemm(rng, M, N, K, trans_a, trans_b, 1.0, beta)
        assert_gemm_close(C, expected, bound, f"C {M}x{N}x{K} ta={trans_a} tb={trans_b}")


@pytest.mark.parametrize("trans_a,trans_b", list(itertools.product([False, True], repeat=2)))
def test_gemm_large(isa, trans_a, trans_b):
    rng = np.random.default_rng(5)
    C, expected, bound = run_gemm(rng, 515, 1030, 257, trans_a, trans_b, 0.75, 0.5)
    assert_gemm_close(C, expected, bound)


@pytest.mark.parametrize("M,N,K", [(300, 700, 500), (1, 2000, 300), (2000, 1, 300),
                                   (257, 255, 1100), (64, 9216, 128)])
def test_gemm_checksum(isa, M, N, K):
    """C t == (beta C0 + alpha A B) t for a random vector t, all in float64 on the right."""
    rng = np.random.default_rng(6)
    alpha, beta = 1.5, -0.5
    for trans_a, trans_b in itertools.product([False, True], repeat=2):
        A, B = operands(rng, M, N, K, trans_a, trans_b)
        C0 = rand(rng, (M, N))
        C = C0.copy()
        _C.gemm(C, A, B, M, N, K, trans_a, trans_b, alpha, beta)
        t = rng.standard_normal(N)
        a, b = op64(A, trans_a), op64(B, trans_b)
        expected = beta * (C0.astype(np.float64) @ t) + alpha * (a @ (b @ t))
        bound = abs(alpha) * np.abs(a) @ (np.abs(b) @ np.abs(t))
        bound += abs(beta) * np.abs(C0.astype(np.float64)) @ np.abs(t)
        assert_gemm_close(C.astype(np.float64) @ t, expected, bound, "C @ t")


def test_gemm_same_result_for_every_thread_count():
    rng = np.random.default_rng(7)
    M, N, K = 200, 300, 600
    A, B = operands(rng, M, N, K, True, False)
    before = _C.num_threads()
    results = []
    try:
        for threads in (1, 2, 3):
            _C.set_num_threads(threads)
            C = nans((M, N))
            _C.gemm(C, A, B, M, N, K, True, False, 1.0, 0.0)
            results.append(C)
    finally:
        _C.set_num_threads(before)
    for C in results[1:]:
        np.testing.assert_array_equal(C, results[0])


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("M,N,K", [(200, 150, 100), (97, 301, 257), (1, 700, 1500)])
def test_gemm_inside_a_parallel_region(isa, threads, M, N, K):
    # Each GEMM runs in one chunk of a parallel_for: it must see that it is inside the region
    # (and plan one block rather than a grid for threads it cannot use), and stay correct.
    rng = np.random.default_rng(M + N + K)
    batch = 5
    A = rand(rng, (batch, M, K))
    B = rand(rng, (batch, K, N))
    before = _C.num_threads()
    try:
        _C.set_num_threads(threads)
        C = nans((batch, M, N))
        outside, inside = _C._gemm_in_region_for_test(C, A, B, batch, M, N, K)
        C1 = nans((batch, M, N))
        _C.set_num_threads(1)
        _C._gemm_in_region_for_test(C1, A, B, batch, M, N, K)
    finally:
        _C.set_num_threads(before)
    assert (outside, inside) == (False, True)
    for i in range(batch):
        a, b = A[i].astype(np.float64), B[i].astype(np.float64)
        assert_gemm_close(C[i], a @ b, np.abs(a) @ np.abs(b))
    np.testing.assert_array_equal(C, C1)  # the same single-block plan as one thread


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("M,N,K,trans_b", [
    (1, 1, 1, False), (7, 17, 5, True), (64, 512, 160, False),   # an LSTM step tile
    (300, 65, 300, True), (97, 1100, 70, False),                   # N above the packed limit
])
def test_gemm_prepacked(isa, threads, M, N, K, trans_b):
    # B packed once (gemm_pack_b) and reused by several row slices (gemm_prepacked), with alpha
    # and beta; 1100 columns exceed the column block, where B is kept by pointer instead.
    rng = np.random.default_rng(M * N + K)
    A = rand(rng, (M, K))
    B = rand(rng, (N, K) if trans_b else (K, N))
    C0 = rand(rng, (M, N))
    before = _C.num_threads()
    try:
        _C.set_num_threads(threads)
        C = C0.copy()
        _C._gemm_prepacked_for_test(C, A, B, M, N, K, trans_b, 0.5, 2.0, 3)
    finally:
        _C.set_num_threads(before)
    a, b = A.astype(np.float64), op64(B, trans_b)
    expected = 0.5 * (a @ b) + 2.0 * C0.astype(np.float64)
    assert_gemm_close(C, expected, 0.5 * np.abs(a) @ np.abs(b) + 2.0 * np.abs(C0))
    C = nans((M, N))
    _C._gemm_prepacked_for_test(C, A, B, M, N, K, trans_b, 1.0, 0.0, 1)  # beta 0: C not read
    assert_gemm_close(C, a @ b, np.abs(a) @ np.abs(b))


# ---- Dense -----------------------------------------------------------------------------------


def act_alpha(act):
    return 0.7 if act in (codes.ELU, codes.LEAKY_RELU) else 0.0


@pytest.mark.parametrize("with_bias", [True, False])
def test_dense_forward(isa, with_bias):
    rng = np.random.default_rng(8)
    for act, (M, N, K) in itertools.product(FUSED, [(1, 1, 1), (10, 20, 64), (33, 50, 17),
                                                    (70, 129, 300)]):
        x, w = rand(rng, (M, K)), rand(rng, (K, N), K**-0.5)  # pre-activations ~ N(0, 1)
        b = rand(rng, (N,)) if with_bias else None
        y = nans((M, N))
        _C.dense_forward(y, x, w, b, M, N, K, act, act_alpha(act))
        expected = np.empty((M, N))
        ref.dense_forward(expected, x, w, b, M, N, K, act, act_alpha(act))
        assert_close(y, expected, rtol=1e-5, atol=2e-5, name=f"y act={act} {M}x{N}x{K}")


@pytest.mark.parametrize("outputs", ["all", "dx", "dkernel", "dbias", "weights"])
def test_dense_backward(isa, outputs):
    rng = np.random.default_rng(9)
    for act, (M, N, K) in itertools.product(FUSED, [(1, 1, 1), (10, 20, 64), (65, 50, 17),
                                                    (130, 70, 200)]):
        alpha = act_alpha(act)
        x, w, b = rand(rng, (M, K)), rand(rng, (K, N), K**-0.5), rand(rng, (N,))
        y = np.empty((M, N), np.float32)
        _C.dense_forward(y, x, w, b, M, N, K, act, alpha)
        dy = rand(rng, (M, N))
        want = {"all": "xwb", "dx": "x", "dkernel": "w", "dbias": "b", "weights": "wb"}[outputs]
        got = {"x": nans((M, K)), "w": nans((K, N)), "b": nans((N,))}
        got = {k: (v if k in want else None) for k, v in got.items()}
        _C.dense_backward(got["x"], got["w"], got["b"], dy, x, y, w, M, N, K, act, alpha)
        exp = {"x": np.empty((M, K)), "w": np.empty((K, N)), "b": np.empty(N)}
        ref.dense_backward(exp["x"], exp["w"], exp["b"], dy, x, y, w, M, N, K, act, alpha)
        dz = np.abs(dy * activation_math.derivative_from_output(y, act, alpha))
        bound = {"x": dz @ np.abs(w.T), "w": np.abs(x.T) @ dz, "b": dz.sum(axis=0)}
        for k in want:
            assert_gemm_close(got[k], exp[k], bound[k], name=f"d{k} act={act} {M}x{N}x{K}")


def test_dense_backward_zero_rows(isa):
    dbias, dkernel = nans((4,)), nans((3, 4))
    empty = np.zeros((0, 4), np.float32)
    _C.dense_backward(np.zeros((0, 3), np.float32), dkernel, dbias, empty,
                      np.zeros((0, 3), np.float32), empty, np.ones((3, 4), np.float32),
                      0, 4, 3, codes.RELU, 0.0)
    np.testing.assert_array_equal(dbias, 0.0)
    np.testing.assert_array_equal(dkernel, 0.0)


# ---- validation ------------------------------------------------------------------------------


def test_gemm_rejects_bad_arguments():
    A, B, C = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32), np.zeros((2, 4), np.float32)
    with pytest.raises(ValueError):
        _C.gemm(C, A.astype(np.float64), B, 2, 4, 3, False, False, 1.0, 0.0)  # dtype
    with pytest.raises(ValueError):
        _C.gemm(C, A, B, 2, 4, 4, False, False, 1.0, 0.0)  # size
    with pytest.raises(ValueError):
        _C.gemm(C, np.ones((3, 2), np.float32).T, B, 2, 4, 3, False, False, 1.0, 0.0)  # strides
    with pytest.raises(ValueError):
        _C.gemm(np.zeros((4, 2), np.float32).T, A, B, 2, 4, 3, False, False, 1.0, 0.0)
    read_only = np.zeros((2, 4), np.float32)
    read_only.flags.writeable = False
    with pytest.raises(ValueError):
        _C.gemm(read_only, A, B, 2, 4, 3, False, False, 1.0, 0.0)
    with pytest.raises(ValueError):
        _C.gemm(C, A, B, -2, 4, 3, False, False, 1.0, 0.0)
    with pytest.raises(ValueError):
        _C.gemm(C, [[1.0] * 3] * 2, B, 2, 4, 3, False, False, 1.0, 0.0)  # not an array


def test_dense_rejects_bad_arguments():
    x, w, y = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32), np.zeros((2, 4), np.float32)
    for act in (codes.GELU, codes.GELU_TANH, codes.SWISH, 99, -1):
        with pytest.raises(ValueError):
            _C.dense_forward(y, x, w, None, 2, 4, 3, act, 0.0)
        with pytest.raises(ValueError):
            _C.dense_backward(None, None, np.zeros(4, np.float32), y, x, y, w, 2, 4, 3, act, 0.0)
    with pytest.raises(ValueError):
        _C.dense_forward(y, x, w, np.ones(3, np.float32), 2, 4, 3, codes.LINEAR, 0.0)  # bias
    with pytest.raises(ValueError):
        _C.dense_backward(np.zeros((2, 3), np.float64), None, None, y, x, y, w, 2, 4, 3,
                          codes.LINEAR, 0.0)
    with pytest.raises(ValueError):
        _C.dense_backward(None, None, None, y[:, :3], x, y, w, 2, 4, 3, codes.LINEAR, 0.0)
