"""The first cells of the Keras-for-researchers guide on `keras.ops` / `keras.random`: the
dtypes of tensors made from Python data, random draws asked for an integer dtype (refused, as
Keras 3 refuses them), Variable assign / assign_add read back element by element."""

import numpy as np
import pytest
from patterns_parity import keras_or_none, to_np

import fkeras

CASES = [
    ([[5, 2], [1, 3]], None),
    (3, None),
    ([1.5, 2.0], None),
    ([True, False], None),
    ([1, 2.5], None),
    ((4, 5), None),
    ([1, 2], "float32"),
    (np.array([1, 2], np.int64), None),
    (np.array([1, 2], np.int16), None),
]


def _dtype(t):
    return str(t.dtype).replace("torch.", "")


@pytest.mark.parametrize("value,dtype", CASES)
def test_convert_to_tensor_dtype_of_python_data(value, dtype):
    got = fkeras.ops.convert_to_tensor(value, dtype=dtype)
    np.testing.assert_array_equal(to_np(got), np.asarray(value, np.float64))
    keras = keras_or_none()
    if keras is not None:
        if isinstance(value, np.ndarray) and value.dtype == np.int64:
            assert _dtype(got) == "int64"  # NumPy data keeps its width (torch keeps it too)
        assert _dtype(got) == _dtype(keras.ops.convert_to_tensor(value, dtype=dtype))
        assert _dtype(fkeras.ops.array(value)) == _dtype(keras.ops.array(value))


def test_python_ints_past_int32_keep_int64():
    assert _dtype(fkeras.ops.convert_to_tensor([2**40, 1])) == "int64"


@pytest.mark.parametrize("fn", ["uniform", "normal", "truncated_normal"])
def test_random_draws_need_a_float_dtype(fn):
    with pytest.raises(ValueError, match=f"keras.random.{fn}` requires a floating point"):
        getattr(fkeras.random, fn)((2, 2), dtype="int32", seed=1)
    keras = keras_or_none()
    if keras is not None:  # Keras refuses too (uniform: the same ValueError)
        with pytest.raises((ValueError, RuntimeError)):
            getattr(keras.random, fn)((2, 2), dtype="int32", seed=1)
    draw = getattr(fkeras.random, fn)((200,), dtype="float32", seed=1)
    assert _dtype(draw) == "float32"


def test_variable_assign_reads_back_elementwise():
    def run(lib):
        rng = np.random.RandomState(0)
        a = lib.Variable(rng.standard_normal((2, 2)).astype("float32"))
        new = lib.ops.convert_to_tensor(rng.standard_normal((2, 2)).astype("float32"))
        a.assign(new)
        checks = [bool(a[i, j] == new[i, j]) for i in range(2) for j in range(2)]
        added = lib.ops.convert_to_tensor(rng.standard_normal((2, 2)).astype("float32"))
        a.assign_add(added)
        checks += [bool(a[i, j] == new[i, j] + added[i, j]) for i in range(2) for j in range(2)]
        return checks, to_np(a)

    checks, value = run(fkeras)
    assert all(checks)
    keras = keras_or_none()
    if keras is not None:
        k_checks, k_value = run(keras)
        assert k_checks == checks
        np.testing.assert_allclose(value, k_value, rtol=1e-6)
