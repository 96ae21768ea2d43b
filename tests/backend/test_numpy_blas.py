"""numpy_blas.single_threaded: NumPy's OpenBLAS on one thread inside, its count restored after."""

import numpy as np
import pytest

from fkeras import initializers
from fkeras.backend import numpy_blas


def _api():
    api = numpy_blas._threads_api()
    if api is None:
        pytest.skip("NumPy here is not linked to a loaded OpenBLAS")
    return api


def test_one_thread_inside_and_restored_after():
    get, set_ = _api()
    before = get()
    try:
        set_(2)
        with numpy_blas.single_threaded():
            assert get() == 1
            np.linalg.qr(np.ones((64, 8)))
        assert get() == 2
        with pytest.raises(RuntimeError):
            with numpy_blas.single_threaded():
                raise RuntimeError("inside")
        assert get() == 2
    finally:
        set_(before)


def test_orthogonal_initializer_values_unchanged():
    # The initializer's QR now runs on one OpenBLAS thread: same orthogonal matrix, within
    # rounding, as NumPy's threaded QR of the same draws.
    _api()
    shape = (128, 512)
    got = initializers.Orthogonal(gain=1.5, seed=3)(shape)
    a = initializers.Orthogonal(seed=3)._rng().normal(0.0, 1.0, (512, 128))
    q, r = np.linalg.qr(a)
    want = 1.5 * (q * np.sign(np.diag(r))).T
    np.testing.assert_allclose(got, want.astype(np.float32), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got @ got.T / 1.5 ** 2, np.eye(128), atol=1e-5)
