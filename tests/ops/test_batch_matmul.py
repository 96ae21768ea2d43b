"""batch_matmul (the GEMM kernel per matrix): values against NumPy float64 on both devices,
gradients against finite differences, symbolic shapes and errors."""

import numpy as np
import pytest
from op_testing import fd_check

import fkeras
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.ops.batch_matmul import batch_matmul


@pytest.mark.parametrize("device", ["cpu", "reference"])
@pytest.mark.parametrize("transpose_b", [False, True])
@pytest.mark.parametrize("lead,M,K,N", [((), 3, 4, 5), ((2,), 1, 3, 2), ((2, 3), 5, 2, 7),
                                        ((4,), 17, 9, 33)])
def test_values_match_numpy(device, transpose_b, lead, M, K, N):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(lead + (M, K)).astype(np.float32)
    b = rng.standard_normal(lead + ((N, K) if transpose_b else (K, N))).astype(np.float32)
    want = np.matmul(a.astype(np.float64),
                     np.swapaxes(b, -1, -2) if transpose_b else b.astype(np.float64))
    with fkeras.device(device):
        got = np.asarray(batch_matmul(a, b, transpose_b=transpose_b))
    assert got.shape == lead + (M, N)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("transpose_b", [False, True])
def test_gradients_match_finite_differences(transpose_b):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 3, 4, 5))
    b = rng.standard_normal((2, 3, 6, 5) if transpose_b else (2, 3, 5, 6))
    fd_check(lambda x, y: batch_matmul(x, y, transpose_b=transpose_b), [a, b], wrt=[0, 1],
             rng=rng)


def test_symbolic_shapes_and_errors():
    out = batch_matmul(KerasTensor((None, 4, 3, 5)), KerasTensor((None, 4, 7, 5)),
                       transpose_b=True)
    assert out.shape == (None, 4, 3, 7)
    with pytest.raises(ValueError, match="inner dimensions"):
        batch_matmul(np.zeros((2, 3, 4), np.float32), np.zeros((2, 5, 6), np.float32))
    with pytest.raises(ValueError, match="leading axes"):
        batch_matmul(np.zeros((2, 3, 4), np.float32), np.zeros((3, 4, 6), np.float32))
    with pytest.raises(ValueError, match="same rank"):
        batch_matmul(np.zeros((2, 3, 4), np.float32), np.zeros((4, 6), np.float32))
