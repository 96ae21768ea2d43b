"""int8 quantization kernels (cpp/quantize): the compiled kernels against the NumPy reference
(int64 sums) on every ISA, the reference against Keras's abs_max_quantize, and bad inputs."""

import numpy as np
import pytest
from fkeras import _C
from fkeras.backend.reference import quantize as ref

SIZES = [(1, 1, 1), (1, 7, 3), (4, 1, 5), (5, 255, 17), (9, 256, 64), (13, 257, 130),
         (37, 600, 31)]


def _int8(rng, shape, low=-128):
    return rng.integers(low, 128, shape).astype(np.int8)


@pytest.mark.parametrize("M,N,K", SIZES)
def test_matmul_int8_matches_int64_reference(isa, M, N, K):
    rng = np.random.default_rng(M * 1000 + N + K)
    a, b = _int8(rng, (M, K)), _int8(rng, (K, N))
    c = np.full((M, N), -12345, np.int32)  # proves overwrite
    _C.matmul_int8(c, a, b, M, N, K)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))


def test_matmul_int8_large_k_reaches_int32_range(isa):
    # Every product of row 0 with column 0 is (-128)(-128) = 16384: K = 131071 sums to
    # 2**31 - 16384, the largest such sum below 2**31; other entries mix signs.
    K = 131071
    a = np.full((2, K), -128, np.int8)
    a[1, ::2] = 127
    b = np.full((K, 3), -128, np.int8)
    b[:, 1] = 127
    c = np.empty((2, 3), np.int32)
    _C.matmul_int8(c, a, b, 2, 3, K)
    want = a.astype(np.int64) @ b.astype(np.int64)
    assert want.max() == 2**31 - 16384 and want.min() < -(2**30)
    np.testing.assert_array_equal(c, want)


def test_matmul_int8_wraps_past_int32_like_an_int32_matmul(isa):
    K = 131073  # 131073 * 16384 = 2**31 + 16384: one step past the range
    a, b = np.full((1, K), -128, np.int8), np.full((K, 1), -128, np.int8)
    c = np.empty((1, 1), np.int32)
    _C.matmul_int8(c, a, b, 1, 1, K)
    assert c[0, 0] == -(2**31) + 16384


@pytest.mark.parametrize("M,K", [(1, 1), (3, 5), (17, 130), (4, 1000)])
def test_quantize_int8_rows_matches_reference(isa, M, K):
    rng = np.random.default_rng(M + K)
    x = (rng.standard_normal((M, K)) * rng.uniform(1e-3, 1e3, (M, 1))).astype(np.float32)
    x[0, 0] = -np.abs(x[0]).max() * 1.0  # a row whose extreme is negative: q = -127
    q, s = np.full((M, K), 99, np.int8), np.full(M, np.nan, np.float32)
    _C.quantize_int8_rows(q, s, x, M, K)
    q_ref, s_ref = ref.quantize_rows(x)
    np.testing.assert_array_equal(q, q_ref)
    np.testing.assert_array_equal(s, s_ref)
    assert q.min() >= -127 and q[0, 0] == -127


def test_quantize_rounds_half_to_even(isa):
    # max|x| = 127: 127 + 1e-7 rounds to 127 in float32, so the scale is exactly 1 and the
    # halves below are true ties.
    x = np.array([[127.0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5]], np.float32)
    q, s = np.empty((1, 7), np.int8), np.empty(1, np.float32)
    _C.quantize_int8_rows(q, s, x, 1, 7)
    assert s[0] == 1.0
    np.testing.assert_array_equal(q, [[127, 0, 2, 2, 0, -2, -2]])


def test_quantize_nan_row_gives_nan_scale_and_zero_codes(isa):
    x = np.array([[1.0, np.nan, -2.0], [1.0, 2.0, 4.0]], np.float32)
    q, s = np.empty((2, 3), np.int8), np.empty(2, np.float32)
    _C.quantize_int8_rows(q, s, x, 2, 3)
    assert np.isnan(s[0]) and not np.isnan(s[1])
    np.testing.assert_array_equal(q[0], [0, 0, 0])
    np.testing.assert_array_equal(q[1], [32, 64, 127])


@pytest.mark.parametrize("M,N,K", SIZES)
def test_dense_int8_forward_matches_reference(isa, M, N, K):
    rng = np.random.default_rng(7 + M + N + K)
    x = rng.standard_normal((M, K)).astype(np.float32)
    kernel = _int8(rng, (K, N), low=-127)
    ks = rng.uniform(1.0, 300.0, N).astype(np.float32)
    y = np.full((M, N), np.nan, np.float32)
    _C.dense_int8_forward(y, x, kernel, ks, M, N, K)
    y_ref = np.empty((M, N), np.float32)
    ref.dense_int8_forward(y_ref, x, kernel, ks, M, N, K)
    np.testing.assert_array_equal(y, y_ref)


def test_reference_quantizer_matches_keras():
    keras = pytest.importorskip("keras")
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((6, 50)) * 5).astype(np.float32)
    q, s = keras.quantizers.abs_max_quantize(x, axis=-1)
    q_ref, s_ref = ref.quantize_rows(x)
    np.testing.assert_array_equal(np.asarray(q), q_ref)
    np.testing.assert_array_equal(np.asarray(s)[:, 0], s_ref)


@pytest.mark.parametrize("call,match", [
    (lambda: _C.matmul_int8(np.empty((2, 2), np.int32), np.zeros((2, 3), np.float32),
                            np.zeros((3, 2), np.int8), 2, 2, 3), "expected dtype int8"),
    (lambda: _C.matmul_int8(np.empty((2, 2), np.int64), np.zeros((2, 3), np.int8),
                            np.zeros((3, 2), np.int8), 2, 2, 3), "expected dtype int32"),
    (lambda: _C.matmul_int8(np.empty((2, 2), np.int32), np.zeros((2, 3), np.int8),
                            np.zeros((4, 2), np.int8), 2, 2, 3), "'B'"),
    (lambda: _C.quantize_int8_rows(np.empty((2, 3), np.int8), np.empty(2, np.float32),
                                   np.zeros((2, 3), np.float32), -2, 3), "'M' must be >= 0"),
    (lambda: _C.dense_int8_forward(np.empty((2, 2), np.float32), np.zeros((2, 3), np.float32),
                                   np.zeros((3, 2), np.int8), np.ones(3, np.float32), 2, 2, 3),
     "kernel_scale"),
])
def test_bad_arguments_raise_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()
