"""bias_activation_backward: the one pass over dy of a fused backward (dense_backward's and the
conv2d op's): dz = dy * act'(from y) and dbias = dz summed over rows.

dz must be bit-identical to activation_backward's (the unfused path), dbias bit-identical to
bias_add_backward over that dz where both use the same grid (one chunk below 2**14 elements;
16 chunks from 2**20 with N <= 2048), and within float64 rounding of the exact sum elsewhere;
the float64 reference kernel is the spec.
"""

import numpy as np
import pytest

from fkeras import _C
from fkeras.backend import codes
from fkeras.backend.reference import KERNELS as REF

# (M, N): edges (1 row, 1 column, odd sizes, row groups of 8 and their tails, wider than the
# 256-column block, more than one bias_add_backward column block), then the CNN's two shapes.
SHAPES = [(1, 1), (7, 1), (8, 3), (9, 5), (17, 33), (63, 64), (129, 300), (40, 2049),
          (300, 55), (64 * 26 * 26, 32), (64 * 24 * 24, 64)]
EXACT = [codes.LINEAR, codes.RELU, codes.LEAKY_RELU]  # derivative exact from y (the conv's)
SMOOTH = [codes.SIGMOID, codes.TANH, codes.ELU]


def _case(M, N, code, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((M, N)).astype(np.float32)
    if code == codes.RELU:
        y = np.maximum(z, 0)
    elif code == codes.LEAKY_RELU:
        y = np.where(z > 0, z, np.float32(0.2) * z).astype(np.float32)
    elif code == codes.SIGMOID:
        y = (1 / (1 + np.exp(-z))).astype(np.float32)
    elif code == codes.TANH:
        y = np.tanh(z)
    elif code == codes.ELU:
        y = np.where(z > 0, z, np.expm1(z)).astype(np.float32)
    else:
        y = z
    dy = rng.standard_normal((M, N)).astype(np.float32)
    return dy, np.ascontiguousarray(y, np.float32)


def _alpha(code):
    return {codes.LEAKY_RELU: 0.2, codes.ELU: 1.0}.get(code, 0.0)


@pytest.mark.parametrize("M,N", SHAPES)
@pytest.mark.parametrize("code", EXACT)
def test_matches_the_unfused_passes_bit_for_bit(M, N, code, isa):
    dy, y = _case(M, N, code)
    a = _alpha(code)
    dz_ref = np.empty_like(dy)
    _C.activation_backward(dz_ref, dy, y, y, dy.size, code, a)
    db_unfused = np.empty(N, np.float32)
    _C.bias_add_backward(db_unfused, dz_ref, M, N)
    dz, db = np.full_like(dy, np.nan), np.full(N, np.nan, np.float32)
    _C.bias_activation_backward(dz, db, dy, y, M, N, code, a)
    assert np.array_equal(dz, dz_ref)
    exact = np.sum(dz_ref.astype(np.float64), axis=0)
    scale = np.sum(np.abs(dz_ref.astype(np.float64)), axis=0)
    assert np.all(np.abs(db - exact) <= 2.0**-23 * (scale + np.abs(exact)) + 1e-30)
    if M * N < 2**14 or (M * N >= 2**20 and N <= 2048):  # the same grid as bias_add_backward
        assert np.array_equal(db, db_unfused)
    # Either output alone gives the same values.
    dz2 = np.full_like(dy, np.nan)
    _C.bias_activation_backward(dz2, None, dy, y, M, N, code, a)
    db2 = np.full(N, np.nan, np.float32)
    _C.bias_activation_backward(None, db2, dy, y, M, N, code, a)
    assert np.array_equal(dz2, dz) and np.array_equal(db2, db)


@pytest.mark.parametrize("M,N", SHAPES[:9])
@pytest.mark.parametrize("code", SMOOTH)
def test_smooth_codes_against_the_float64_reference(M, N, code, isa):
    dy, y = _case(M, N, code, seed=1)
    a = _alpha(code)
    dz_ref, db_ref = np.empty((M, N)), np.empty(N)
    REF["bias_activation_backward"](dz_ref, db_ref, dy, y, M, N, code, a)
    dz, db = np.full_like(dy, np.nan), np.full(N, np.nan, np.float32)
    _C.bias_activation_backward(dz, db, dy, y, M, N, code, a)
    np.testing.assert_allclose(dz, dz_ref, rtol=2e-6, atol=1e-7)
    scale = np.sum(np.abs(dz_ref), axis=0)
    assert np.all(np.abs(db - db_ref) <= 1e-6 * scale + 1e-7)


def test_thread_count_does_not_change_the_result():
    dy, y = _case(64 * 24 * 24, 64, codes.RELU, seed=2)
    outs = []
    before = _C.num_threads()
    try:
        for n in (1, 2, 3):
            _C.set_num_threads(n)
            dz, db = np.empty_like(dy), np.empty(64, np.float32)
            _C.bias_activation_backward(dz, db, dy, y, dy.shape[0], 64, codes.RELU, 0.0)
            outs.append((dz, db))
    finally:
        _C.set_num_threads(before)
    for dz, db in outs[1:]:
        assert np.array_equal(dz, outs[0][0]) and np.array_equal(db, outs[0][1])


def test_zero_rows_and_nan_propagation():
    db = np.full(3, np.nan, np.float32)
    _C.bias_activation_backward(None, db, np.empty((0, 3), np.float32),
                                np.empty((0, 3), np.float32), 0, 3, codes.RELU, 0.0)
    assert np.array_equal(db, np.zeros(3, np.float32))
    dy = np.ones((9, 2), np.float32)
    dy[4, 1] = np.nan
    y = np.zeros((9, 2), np.float32)  # ReLU inactive: NaN * 0 stays NaN, as activation_backward
    dz, db = np.empty_like(dy), np.empty(2, np.float32)
    _C.bias_activation_backward(dz, db, dy, y, 9, 2, codes.RELU, 0.0)
    assert np.isnan(dz[4, 1]) and np.isnan(db[1]) and db[0] == 0.0


def test_errors_name_the_kernel_and_argument():
    dy = np.zeros((4, 3), np.float32)
    with pytest.raises(ValueError, match="bias_activation_backward.*dbias"):
        _C.bias_activation_backward(None, np.zeros(4, np.float32), dy, dy, 4, 3, 0, 0.0)
    with pytest.raises(ValueError, match="bias_activation_backward.*activation"):
        _C.bias_activation_backward(None, None, dy, dy, 4, 3, codes.GELU, 0.0)
    with pytest.raises(ValueError, match="bias_activation_backward.*dz"):
        _C.bias_activation_backward(dy, None, dy, dy, 4, 3, 0, 0.0)  # dz aliases dy
