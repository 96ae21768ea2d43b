"""fkeras.backend: Keras 3's keras.backend names and the Keras 2 K. functions."""

import numpy as np
import pytest

import fkeras
from fkeras import backend as K

KERAS3_NAMES = ["backend", "clear_session", "epsilon", "floatx", "get_uid",
                "image_data_format", "is_float_dtype", "is_int_dtype", "is_keras_tensor",
                "result_type", "set_epsilon", "set_floatx", "set_image_data_format",
                "standardize_dtype"]


def test_keras3_backend_names_exist():
    missing = [n for n in KERAS3_NAMES if not callable(getattr(K, n, None))]
    assert missing == []
    keras = pytest.importorskip("keras")
    public = {n for n in dir(keras.backend) if not n.startswith("_")}
    assert sorted(public - set(dir(K))) == []


def test_devices_api_is_unchanged():
    assert K.current_device_name() in K.available_devices()
    with K.device("reference"):
        assert K.get_device().name == "reference"


def test_backend_name_and_settings():
    assert K.backend() == "fkeras"
    assert K.floatx() == "float32"
    with pytest.raises(ValueError):
        K.set_floatx("float64")
    old = K.epsilon()
    try:
        K.set_epsilon(1e-5)
        assert K.epsilon() == 1e-5 and fkeras.config.epsilon() == 1e-5
    finally:
        K.set_epsilon(old)
    old = K.image_data_format()
    try:
        K.set_image_data_format("channels_first")
        assert K.image_data_format() == "channels_first"
    finally:
        K.set_image_data_format(old)


@pytest.mark.parametrize("dtype,is_float,is_int", [
    ("float32", True, False), ("bfloat16", True, False), (np.float64, True, False),
    ("int8", False, True), ("uint16", False, True), ("bool", False, False),
])
def test_dtype_predicates_match_keras(dtype, is_float, is_int):
    assert K.is_float_dtype(dtype) is is_float
    assert K.is_int_dtype(dtype) is is_int
    keras = pytest.importorskip("keras")
    assert keras.backend.is_float_dtype(dtype) is is_float
    assert keras.backend.is_int_dtype(dtype) is is_int
    assert K.standardize_dtype(dtype) == keras.backend.standardize_dtype(dtype)


def test_result_type_and_is_keras_tensor():
    assert K.result_type("int32", "int64") == "int64"
    assert K.result_type("float32", "int8") == "float32"
    assert K.result_type("bool", "int8") == "int8"
    assert K.is_keras_tensor(fkeras.Input((3,)))
    assert not K.is_keras_tensor(np.zeros(3))


def test_get_uid_and_clear_session():
    K.clear_session()
    assert (K.get_uid("thing"), K.get_uid("thing")) == (1, 2)
    K.clear_session()
    assert K.get_uid("thing") == 1


def test_keras2_functions():
    v = K.variable(np.array([[1.0, 2.0], [3.0, 4.0]]), name="v")
    assert isinstance(v, fkeras.Variable) and v.dtype == "float32"
    assert K.int_shape(v) == (2, 2) and K.ndim(v) == 2 and K.dtype(v) == "float32"
    assert K.int_shape(fkeras.Input((None, 3))) == (None, None, 3)
    np.testing.assert_array_equal(K.get_value(v), [[1, 2], [3, 4]])
    K.set_value(v, np.zeros((2, 2)))
    np.testing.assert_array_equal(K.eval(v), 0)
    w = K.variable(np.ones(3))
    K.batch_set_value([(v, np.ones((2, 2))), (w, [5.0, 6.0, 7.0])])
    a, b = K.batch_get_value([v, w])
    assert isinstance(a, np.ndarray) and a.sum() == 4 and list(b) == [5, 6, 7]
    c = K.constant(2.0, shape=(2, 3))
    assert K.int_shape(c) == (2, 3) and K.dtype(c) == "float32"
    np.testing.assert_array_equal(np.asarray(K.shape(c)), [2, 3])
    assert K.shape(fkeras.Input((4,))) == (None, 4)
    assert K.count_params(K.zeros((3, 4))) == 12
    assert float(np.sum(K.get_value(K.ones((2, 2))))) == 4.0
    r = K.random_uniform_variable((100,), -1.0, 1.0, seed=1)
    assert K.get_value(r).min() >= -1 and K.get_value(r).max() <= 1
    assert np.array_equal(K.get_value(r), K.get_value(K.random_uniform_variable((100,), -1.0,
                                                                               1.0, seed=1)))
    n = K.get_value(K.random_normal_variable((2000,), 3.0, 0.5, seed=2))
    assert abs(n.mean() - 3.0) < 0.05 and abs(n.std() - 0.5) < 0.05
    with pytest.raises(ValueError, match="Variable"):
        K.set_value(np.zeros(2), [1, 2])
