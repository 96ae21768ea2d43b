"""Dtype promotion of operators and elementwise ops (ops/dtypes.py's rule), compared with
Keras 3's `keras.backend.result_type` (the JAX-like rule) where fkeras follows it; and `cast`.

Each row: left operand dtype, right operand (a dtype name: a tensor; ("np", dtype): a NumPy
array; a Python scalar: weak), `fkeras.ops.result_type`'s answer, keras.backend.result_type's.
The rows where the two columns differ are the documented differences
(docs/keras_compatibility.md, "Dtype promotion"). An op computes a float16 result in the
device's float dtype (float32 on cpu): the registry converts floating inputs to it.
"""

import numpy as np
import pytest

import fkeras
from fkeras import ops
from fkeras.ops.dtypes import result_type, standardize_dtype

T = ops.convert_to_tensor

TABLE = [
    # weak Python scalars take the tensor's dtype within its kind
    ("int8", 100, "int8", "int8"),
    ("uint8", 1, "uint8", "uint8"),
    ("int32", True, "int32", "int32"),
    ("float16", 1, "float16", "float16"),
    ("float16", 1.5, "float16", "float16"),
    ("float32", 1, "float32", "float32"),
    # ... and promote across kinds
    ("bool", 1, "int32", "int32"),
    ("bool", True, "bool", "bool"),
    ("bool", 1.5, "float32", "float32"),
    ("int32", 1.5, "float32", "float32"),
    ("int64", 1.5, "float32", "float32"),
    # NumPy arrays meeting a tensor are strong operands
    ("float32", ("np", "float64"), "float32", "float32"),
    ("int32", ("np", "int64"), "int64", "int32"),        # differs: labels keep int64
    ("int32", ("np", "float64"), "float32", "float32"),
    ("float16", ("np", "float64"), "float32", "float32"),
    # tensor with tensor
    ("bool", "bool", "bool", "bool"),
    ("bool", "int8", "int8", "int8"),
    ("int8", "int16", "int16", "int16"),
    ("uint8", "int8", "int16", "int16"),
    ("uint8", "uint32", "uint32", "uint32"),
    ("int32", "uint32", "int64", "int32"),               # differs: NumPy's integer table
    ("int64", "uint64", "float32", "float32"),
    ("int32", "float16", "float16", "float16"),
    ("int16", "float16", "float16", "float16"),
    ("bool", "float16", "float16", "float16"),
    ("float16", "float16", "float16", "float16"),
    ("float16", "float32", "float32", "float32"),
    ("int32", "float32", "float32", "float32"),
]
DIFFERS = {(a, str(b)) for a, b, f, k in TABLE if f != k}


def _operand(spec, shape=(3,)):
    if spec == "float16":  # convert_to_tensor gives float data the device float dtype
        return ops.cast(np.ones(shape), "float16")
    if isinstance(spec, str):
        return T(np.ones(shape, spec))
    if isinstance(spec, tuple):
        return np.ones(shape, spec[1])
    return spec


def _ids(row):
    return f"{row[0]}-{row[1]}"


@pytest.mark.parametrize("left,right,expect,keras_expect", TABLE, ids=map(_ids, TABLE))
def test_operator_result_dtype(left, right, expect, keras_expect):
    a, b = _operand(left), _operand(right)
    assert result_type(a, b) == np.dtype(expect) == result_type(b, a)
    computed = np.dtype("float32" if expect == "float16" else expect)
    results = [a + b, b + a, a * b, ops.maximum(b, a)]
    if expect != "bool":
        results.append(ops.subtract(a, b))
    for y in results:
        assert np.dtype(y.dtype) == computed, (left, right, y.dtype)
    ref = np.logical_or if expect == "bool" else np.add
    np.testing.assert_array_equal(a + b, ref(np.asarray(a, np.float64), np.asarray(b, np.float64)))


def test_float16_is_computed_in_float32():
    # Keras 3 keeps float16 (result_type("float16", "float16") == "float16"); fkeras's ops
    # compute floats in the device's float dtype, so only `cast` gives a float16 tensor.
    h = ops.cast(np.ones(3), "float16")
    assert h.dtype == np.float16 and result_type(h, h) == np.float16
    assert (h + h).dtype == np.float32
    assert T(np.ones(3, np.float16)).dtype == np.float32


@pytest.mark.parametrize("left,right,expect,keras_expect", TABLE, ids=map(_ids, TABLE))
def test_keras_result_type_column(left, right, expect, keras_expect):
    keras = pytest.importorskip("keras")
    b = right[1] if isinstance(right, tuple) else right if isinstance(right, str) else type(right)
    assert keras.backend.result_type(left, b) == keras_expect


def test_float_result_is_the_device_float_dtype():
    with fkeras.device("reference"):  # the float64 reference device
        assert (T(np.ones(2, "int32")) + 1.5).dtype == np.float64
        assert (T(np.ones(2, "int32")) / 2).dtype == np.float64


OPERATOR_DTYPES = [  # (expression, fkeras dtype, Keras on torch dtype)
    ("i32 / 2", "float32", "float32"), ("i32 / i32", "float32", "float32"),
    ("i8 / 2", "float32", "float32"), ("b / b", "float32", "float32"),
    ("i32 // 2", "int32", "int32"), ("i32 % 2", "int32", "int32"),
    ("i32 ** 2", "int32", "int32"), ("i32 // 2.0", "float32", "float32"),
    ("f16 / 2", "float32", "float16"), ("i32 * 1.5", "float32", "float32"),
    ("b & b", "bool", "bool"), ("b | True", "bool", "bool"), ("b ^ b", "bool", "bool"),
    ("i32 & 1", "int32", "int32"), ("i32 < 1", "bool", "bool"), ("f32 == f32", "bool", "bool"),
    ("i8 >= 1.5", "bool", "bool"), ("b != b", "bool", "bool"), ("-i32", "int32", "int32"),
    ("abs(i8)", "int8", "int8"), ("~b", "bool", "bool"), ("~i32", "int32", "int32"),
]


def _env(module):
    c = module.convert_to_tensor
    return {"i32": c(np.array([3, 5], "int32")), "i8": c(np.array([3, 5], "int8")),
            "b": c(np.array([True, False])), "f16": module.cast(c([1, 2]), "float16"),
            "f32": c(np.array([1, 2], "float32"))}


@pytest.mark.parametrize("expr,expect,keras_expect", OPERATOR_DTYPES,
                         ids=[e[0] for e in OPERATOR_DTYPES])
def test_operator_dtypes(expr, expect, keras_expect):
    y = eval(expr, {}, _env(ops))
    assert np.dtype(y.dtype) == np.dtype(expect)
    # The values are NumPy's (NumPy 2 also treats Python scalars as weak).
    ref = eval(expr, {}, {k: np.asarray(v) for k, v in _env(ops).items()})
    np.testing.assert_allclose(np.asarray(y, np.float64), np.asarray(ref, np.float64),
                               rtol=1e-3)


@pytest.mark.parametrize("expr,expect,keras_expect", OPERATOR_DTYPES,
                         ids=[e[0] for e in OPERATOR_DTYPES])
def test_operator_dtypes_keras_torch(expr, expect, keras_expect):
    keras = pytest.importorskip("keras")
    if keras.backend.backend() != "torch":
        pytest.skip("compared with Keras on torch")
    y = eval(expr, {}, _env(keras.ops))
    assert keras.backend.standardize_dtype(y.dtype) == keras_expect


def test_int8_wraps_like_numpy_between_tensors_and_refuses_out_of_range_scalars():
    a = T(np.array([100, -100], "int8"))
    np.testing.assert_array_equal(a + a, np.array([100, -100], "int8") * 2)  # wraps: -56, 56
    with pytest.raises(OverflowError, match="1000"):
        a + 1000
    with pytest.raises(OverflowError):
        T(np.array([1], "uint8")) - 300


# ---- cast ----

@pytest.mark.parametrize("src,dst,value,expect", [
    ("float32", "int32", [1.7, -1.7], [1, -1]),
    ("float32", "bool", [0.0, 2.0], [False, True]),
    ("int32", "float32", [1, 2], [1.0, 2.0]),
    ("bool", "int32", [True, False], [1, 0]),
    ("float32", "float16", [1.5, 2.0], [1.5, 2.0]),
    ("float32", "float64", [1.5, 2.0], [1.5, 2.0]),
    ("int64", "int8", [130, 2], [-126, 2]),
])
def test_cast_values(src, dst, value, expect):
    y = ops.cast(T(np.array(value, src)), dst)
    assert y.dtype == np.dtype(dst)
    np.testing.assert_array_equal(y, np.array(expect, dst))
    assert (T(np.array(value, src)).astype(dst)).dtype == np.dtype(dst)


def test_cast_gradient_between_floats_only():
    x = fkeras.Variable(np.array([1.25, 2.5], np.float32))
    with fkeras.GradientTape(persistent=True) as tape:
        y = ops.cast(x, "float16")
        z = ops.sum(ops.cast(ops.cast(x, "int32"), "float32"))
    g = tape.gradient(y, x, output_gradients=np.array([2.0, -1.0], np.float16))
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g, [2.0, -1.0])
    assert tape.gradient(z, x) is None


@pytest.mark.parametrize("dtype", ["float16", "float64"])
def test_gradient_flows_through_an_op_on_a_cast_tensor(dtype):
    x = fkeras.Variable(np.array([1.25, 2.5], np.float32))
    with fkeras.GradientTape() as tape:
        y = ops.sum(ops.cast(x, dtype) * 3.0)
    np.testing.assert_array_equal(tape.gradient(y, x), [3.0, 3.0])


def test_cast_to_string_raises():
    with pytest.raises(ValueError, match="string"):
        ops.cast(T([1.0]), "string")


STANDARD = [  # as keras.backend.standardize_dtype, which rejects the last four
    (np.float16, "float16"), (np.dtype("int8"), "int8"), (bool, "bool"), (int, "int32"),
    (float, "float32"), (str, "string"), ("int", "int32"), (None, "float32"),
    ("float32", "float32"), (np.int64, "int64"),
    ("float", "float32"), ("double", "float64"), ("bool_", "bool"), ("torch.float16", "float16"),
]


@pytest.mark.parametrize("given,name", STANDARD, ids=[str(g) for g, _ in STANDARD])
def test_standardize_dtype(given, name):
    assert standardize_dtype(given) == name


@pytest.mark.parametrize("given,name", STANDARD[:10], ids=[str(g) for g, _ in STANDARD[:10]])
def test_standardize_dtype_keras_parity(given, name):
    keras = pytest.importorskip("keras")
    assert keras.backend.standardize_dtype(given) == name
