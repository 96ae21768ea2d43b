"""fkeras.Tensor's Python operators: values against NumPy float64, gradients against central
differences (random cotangent, float64 reference device), dtypes, reflected forms, indexing,
conversions and the errors of wrong use."""

import operator
import pathlib
import re
import sys

import numpy as np
import pytest

import fkeras
from fkeras import ops
from fkeras.engine.tensor import Tensor

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "ops"))
from op_testing import fd_check  # noqa: E402

T = ops.convert_to_tensor

# name, operator, NumPy float64 reference
ARITH = [
    ("add", operator.add, np.add),
    ("sub", operator.sub, np.subtract),
    ("mul", operator.mul, np.multiply),
    ("truediv", operator.truediv, np.true_divide),
    ("floordiv", operator.floordiv, np.floor_divide),
    ("mod", operator.mod, np.mod),
    ("pow", operator.pow, np.power),
]
COMPARE = [
    ("eq", operator.eq, np.equal), ("ne", operator.ne, np.not_equal),
    ("lt", operator.lt, np.less), ("le", operator.le, np.less_equal),
    ("gt", operator.gt, np.greater), ("ge", operator.ge, np.greater_equal),
]
BITWISE = [("and", operator.and_, np.bitwise_and), ("or", operator.or_, np.bitwise_or),
           ("xor", operator.xor, np.bitwise_xor)]

# How the operands meet: both Tensors, a Tensor with a NumPy array on either side.
FORMS = {
    "tensor_tensor": lambda op, a, b: op(Tensor(a), Tensor(b)),
    "tensor_ndarray": lambda op, a, b: op(Tensor(a), b),
    "ndarray_tensor": lambda op, a, b: op(a, Tensor(b)),
}
SHAPES = [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((2, 3), ()), ((), (2, 3))]
SCALAR = 1.7


def _operands(rng, sa, sb):
    # Positive and away from 0 so that /, //, %, ** are smooth at the sample points.
    return rng.uniform(0.5, 2.0, sa), rng.uniform(0.5, 2.0, sb)


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("name,op,ref", ARITH, ids=[a[0] for a in ARITH])
def test_arithmetic_forward_matches_numpy(name, op, ref, shapes, form):
    rng = np.random.default_rng(0)
    a, b = _operands(rng, *shapes)
    y = FORMS[form](op, a.astype(np.float32), b.astype(np.float32))
    assert type(y) is Tensor
    assert y.dtype == np.float32 and y.shape == np.broadcast_shapes(*shapes)
    np.testing.assert_allclose(np.asarray(y), ref(a, b), rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("name,op,ref", ARITH, ids=[a[0] for a in ARITH])
def test_arithmetic_gradient_finite_differences(name, op, ref, shapes, form):
    rng = np.random.default_rng(1)
    a, b = _operands(rng, *shapes)
    fd_check(lambda x, y: FORMS[form](op, x, y), [a, b], wrt=[0, 1], rng=rng)


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("name,op,ref", ARITH, ids=[a[0] for a in ARITH])
def test_arithmetic_with_python_scalar(name, op, ref, side):
    rng = np.random.default_rng(2)
    a = rng.uniform(0.5, 2.0, (2, 3))
    f = (lambda x: op(Tensor(x), SCALAR)) if side == "right" else (lambda x: op(SCALAR, Tensor(x)))
    expect = ref(a, SCALAR) if side == "right" else ref(SCALAR, a)
    y = f(a.astype(np.float32))
    assert type(y) is Tensor and y.dtype == np.float32
    np.testing.assert_allclose(np.asarray(y), expect, rtol=2e-5, atol=1e-6)
    fd_check(f, [a], wrt=[0], rng=rng)


MATMUL_SHAPES = [((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)), ((3,), (3,)),
                 ((2, 2, 3), (3, 4)), ((2, 1, 2, 3), (3, 3, 2))]


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul_forward_and_gradient(shapes, form):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    y = FORMS[form](operator.matmul, a.astype(np.float32), b.astype(np.float32))
    assert type(y) is Tensor and y.dtype == np.float32
    np.testing.assert_allclose(np.asarray(y), a @ b, rtol=1e-5, atol=1e-5)
    fd_check(lambda x, z: FORMS[form](operator.matmul, x, z), [a, b], wrt=[0, 1], rng=rng)


@pytest.mark.parametrize("name,op,ref", [("neg", operator.neg, np.negative),
                                         ("pos", operator.pos, np.positive),
                                         ("abs", abs, np.abs)])
def test_unary_forward_and_gradient(name, op, ref):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 4))
    a[np.abs(a) < 0.05] = 0.5  # abs is not differentiable at 0
    y = op(T(a))
    assert type(y) is Tensor and y.dtype == np.float32
    np.testing.assert_allclose(np.asarray(y), ref(a), rtol=1e-6)
    fd_check(lambda x: op(Tensor(x)), [a], wrt=[0], rng=rng)


def test_ndarray_on_the_left_is_recorded():
    # `ndarray - tensor` goes through __array_ufunc__: a Tensor, and on the tape.
    a = np.array([[1.0, 2.0, 3.0]], np.float32)
    x = T([[0.5, 1.0, 1.5]])
    with fkeras.GradientTape() as tape:
        tape.watch(x)
        y = a - x
        z = np.float32(3.0) * x  # a NumPy scalar on the left, too
    assert type(y) is Tensor and type(z) is Tensor
    np.testing.assert_array_equal(tape.gradient([y, z], x), [[2.0, 2.0, 2.0]])


@pytest.mark.parametrize("fn,ref", [(np.exp, np.exp), (np.sqrt, np.sqrt), (np.tanh, np.tanh),
                                    (np.square, np.square)], ids=lambda f: f.__name__)
def test_numpy_ufuncs_on_a_tensor_are_ops(fn, ref):
    rng = np.random.default_rng(5)
    a = rng.uniform(0.5, 2.0, (2, 3))
    assert type(fn(T(a))) is Tensor
    np.testing.assert_allclose(np.asarray(fn(T(a))), ref(a), rtol=1e-6)
    fd_check(lambda x: fn(Tensor(x)), [a], wrt=[0], rng=rng)


# ---- integer and bool operands: dtype of the result, no gradient to them ----

@pytest.mark.parametrize("name,op,ref", ARITH, ids=[a[0] for a in ARITH])
@pytest.mark.parametrize("other_dtype", ["int32", "bool"])
def test_float_with_integer_operand_has_no_gradient_to_it(name, op, ref, other_dtype):
    rng = np.random.default_rng(6)
    a = rng.uniform(0.5, 2.0, (2, 3))
    k = (rng.integers(1, 4, (3,)) if other_dtype == "int32" else np.ones(3)).astype(other_dtype)
    y = op(T(a), T(k))
    assert y.dtype == np.float32
    np.testing.assert_allclose(np.asarray(y), ref(a, k.astype(np.float64)), rtol=2e-5)
    fd_check(lambda x: op(Tensor(x), Tensor(k)), [a], wrt=[0], rng=rng)
    kt = T(k)
    with fkeras.GradientTape() as tape:
        x = T(a)
        tape.watch(x)
        y = op(x, kt)
    gx, gk = tape.gradient(y, [x, kt])
    assert gx is not None and gk is None


INT_RESULTS = [  # (operator, left dtype, right operand, result dtype)
    (operator.add, "int32", 2, "int32"), (operator.sub, "int32", 2, "int32"),
    (operator.mul, "int32", 2, "int32"), (operator.truediv, "int32", 2, "float32"),
    (operator.floordiv, "int32", 2, "int32"), (operator.mod, "int32", 2, "int32"),
    (operator.pow, "int32", 2, "int32"), (operator.add, "int32", 1.5, "float32"),
    (operator.add, "bool", 1, "int32"), (operator.add, "bool", True, "bool"),
    (operator.floordiv, "float32", 2, "float32"), (operator.truediv, "bool", True, "float32"),
]


@pytest.mark.parametrize("op,dtype,other,expect", INT_RESULTS,
                         ids=lambda v: getattr(v, "__name__", str(v)))
def test_integer_and_bool_result_dtypes_and_values(op, dtype, other, expect):
    a = np.array([[1, 7, 4], [3, 0, 6]]).astype(dtype)
    y = op(T(a), other)
    assert y.dtype == np.dtype(expect)
    np.testing.assert_allclose(np.asarray(y), op(a, other))  # NumPy 2: scalars are weak too
    r = op(other, T(a + 1 if dtype != "bool" else a | True))  # reflected form, same dtype
    assert r.dtype == np.dtype(expect)


def test_integer_floor_division_by_zero_raises():
    with pytest.raises(ZeroDivisionError, match="floor_divide"):
        T(np.array([1, 2], "int32")) // 0
    with pytest.raises(ZeroDivisionError, match="mod"):
        T(np.array([1, 2], "int32")) % T(np.array([1, 0], "int32"))


# ---- comparisons and bitwise/logical operators ----

@pytest.mark.parametrize("form", list(FORMS) + ["scalar_right", "scalar_left"])
@pytest.mark.parametrize("name,op,ref", COMPARE, ids=[c[0] for c in COMPARE])
def test_comparisons_give_bool_and_no_gradient(name, op, ref, form):
    a = np.array([[1.0, 2.0, 3.0], [2.0, 2.0, 0.0]], np.float32)
    b = np.array([2.0, 2.0, 1.0], np.float32)
    if form == "scalar_right":
        y, expect = op(T(a), 2.0), ref(a, 2.0)
    elif form == "scalar_left":
        y, expect = op(2.0, T(a)), ref(2.0, a)
    else:
        y, expect = FORMS[form](op, a, b), ref(a, b)
    assert type(y) is Tensor and y.dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(y), expect)
    x = T(a)
    with fkeras.GradientTape() as tape:
        tape.watch(x)
        z = ops.sum(ops.cast(op(x, 2.0), "float32") * x)  # the comparison passes nothing
    np.testing.assert_array_equal(tape.gradient(z, x), ref(a, 2.0).astype(np.float32))


@pytest.mark.parametrize("name,op,ref", BITWISE, ids=[b[0] for b in BITWISE])
@pytest.mark.parametrize("dtype", ["bool", "int32", "uint8"])
def test_bitwise_and_logical_operators(name, op, ref, dtype):
    a = np.array([[0, 1, 5], [3, 6, 1]]).astype(dtype)
    b = np.array([1, 3, 4]).astype(dtype)
    for y, expect in [(op(T(a), T(b)), ref(a, b)), (op(T(a), b), ref(a, b)),
                      (op(a, T(b)), ref(a, b))]:
        assert type(y) is Tensor and y.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(np.asarray(y), expect)
    scalar = True if dtype == "bool" else 3
    for y, expect in [(op(T(a), scalar), ref(a, scalar)), (op(scalar, T(a)), ref(scalar, a))]:
        assert y.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(np.asarray(y), expect)


def test_invert():
    np.testing.assert_array_equal(~T(np.array([True, False])), [False, True])
    y = ~T(np.array([0, 5], "int32"))
    assert y.dtype == np.int32
    np.testing.assert_array_equal(y, [-1, -6])
    with pytest.raises(TypeError, match="bitwise_invert"):
        ~T([1.0, 2.0])
    with pytest.raises(TypeError, match="bitwise_and"):
        T([1.0]) & T([2.0])


# ---- indexing ----

INDEX_KEYS = {
    "int": 1, "negative_int": -1, "two_ints": (1, 2), "scalar": (0, -2, 3),
    "slice": slice(1, None), "slice_step": (slice(None), slice(0, 4, 2)),
    "negative_step": (slice(None, None, -1), slice(3, 0, -2)),
    "none": (None, 1), "ellipsis": (Ellipsis, 1), "ellipsis_none": (0, Ellipsis, None),
    "int_list": [0, 2, 2], "int_array": np.array([[1, 0], [2, 2]]),
    "int_pairs": (np.array([0, 2]), np.array([1, 3])),
    "bool_mask_rows": np.array([True, False, True]),
    "mixed_slice_array": (slice(None), [3, 0, 3]),
    "mixed_separated": (np.array([0, 2]), slice(1, 3), np.array([1, 0])),
    "mixed_none_array": (None, [1, 0], Ellipsis, 2),
}
X_SHAPE = (3, 4, 5)


@pytest.mark.parametrize("key", list(INDEX_KEYS.values()), ids=list(INDEX_KEYS))
def test_getitem_forward_and_gradient(key):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(X_SHAPE)
    y = T(x)[key]
    assert type(y) is Tensor
    np.testing.assert_allclose(np.asarray(y), x.astype(np.float32)[key])
    assert y.shape == x[key].shape
    fd_check(lambda a: Tensor(a)[key], [x], wrt=[0], rng=rng)


@pytest.mark.parametrize("make_key", [
    lambda x: T(x) > 0,                                   # a bool Tensor mask, full shape
    lambda x: T(x[:, :, 0]) > 0,                          # a mask over the leading axes
    lambda x: np.asarray(x[0]) > 0,                       # a NumPy mask over the trailing axes
    lambda x: T(np.array([2, 0, 0])),                     # an integer Tensor
    lambda x: (T(np.array([1, 2])), slice(None), T(np.array(4))),
], ids=["tensor_mask", "leading_mask", "trailing_mask_ndarray", "int_tensor", "int_tensors"])
def test_getitem_with_tensor_and_mask_keys(make_key):
    rng = np.random.default_rng(8)
    x = rng.standard_normal(X_SHAPE)
    key = make_key(x)
    if isinstance(key, np.ndarray) and key.dtype == bool and key.ndim == 2:
        key = (slice(None), key)
    np_key = tuple(np.asarray(k) if isinstance(k, Tensor) else k for k in key) \
        if isinstance(key, tuple) else np.asarray(key)
    np.testing.assert_allclose(np.asarray(T(x)[key]), x.astype(np.float32)[np_key])
    fd_check(lambda a: Tensor(a)[key], [x], wrt=[0], rng=rng)


def test_getitem_scalar_index_gives_a_0d_tensor():
    t = T(np.arange(6.0).reshape(2, 3))
    assert t[1, 2].shape == () and float(t[1, 2]) == 5.0
    assert t[T(np.array(1, "int32"))].shape == (3,)
    assert t[np.int64(1), -1].shape == ()


@pytest.mark.parametrize("key", [3, -4, (0, 3), (slice(None), -4), [0, 5]])
def test_getitem_out_of_range_raises_index_error(key):
    with pytest.raises(IndexError):
        T(np.zeros((3, 3)))[key]


# ---- attributes and conversions ----

def test_attributes_len_iter_numpy():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = T(a)
    assert (t.shape, t.dtype, t.ndim, t.size, len(t)) == ((3, 4), np.float32, 2, 12, 3)
    rows = list(t)
    assert len(rows) == 3 and all(type(r) is Tensor and r.shape == (4,) for r in rows)
    np.testing.assert_array_equal(rows[2], a[2])
    n = t.numpy()
    assert type(n) is np.ndarray
    assert np.asarray(t) is n is t._value  # no copy
    assert np.array(t, copy=True) is not n
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    assert np.asarray(t, copy=False) is n
    with pytest.raises(ValueError, match="copy"):
        np.asarray(t, dtype=np.float64, copy=False)
    with pytest.raises(TypeError, match="0-d"):
        len(T(1.0))
    with pytest.raises(TypeError, match="0-d"):
        iter(T(1.0))


def test_iterating_records_rows_on_the_tape():
    x = T(np.array([[1.0, 2.0], [3.0, 4.0]]))
    with fkeras.GradientTape() as tape:
        tape.watch(x)
        total = sum(row * float(i + 1) for i, row in enumerate(x))
    np.testing.assert_array_equal(tape.gradient(total, x), [[1.0, 1.0], [2.0, 2.0]])


@pytest.mark.parametrize("value,dtype", [(2.5, "float32"), (3, "int32"), (True, "bool")])
def test_scalar_conversions(value, dtype):
    t = T(np.array(value, dtype))
    assert float(t) == float(value) and int(t) == int(value) and bool(t) == bool(value)
    one = T(np.array([value], dtype))  # one element, as NumPy and torch accept
    assert float(one) == float(value)
    if dtype != "float32":
        assert [10, 20, 30, 40][t] == [10, 20, 30, 40][int(value)]
        assert operator.index(t) == int(value)


@pytest.mark.parametrize("convert", [bool, float, int, complex])
def test_scalar_conversions_of_many_elements_raise(convert):
    with pytest.raises(ValueError, match=r"shape \(2, 3\)"):
        convert(T(np.ones((2, 3))))
    with pytest.raises(ValueError, match="empty"):
        convert(T(np.ones((0,))))


def test_float_tensor_is_not_an_index():
    with pytest.raises(TypeError, match="integer"):
        [1, 2, 3][T(1.0)]


def test_repr():
    r = repr(T(np.array([[1.0, 2.5]])))
    assert r.startswith("tensor([[1. , 2.5]]") and "shape=(1, 2)" in r and "dtype=float32" in r
    assert str(T(np.array(3, "int32"))) == "tensor(3, shape=(), dtype=int32)"


def test_augmented_assignment_rebinds_and_is_recorded():
    x = T(np.array([1.0, 2.0]))
    y = x
    with fkeras.GradientTape() as tape:
        tape.watch(x)
        y = y * 3.0
        y -= x          # no in-place update: a new Tensor, on the tape
        y **= 2
    np.testing.assert_array_equal(x, [1.0, 2.0])
    np.testing.assert_allclose(tape.gradient(y, x), 2 * (2 * np.array([1.0, 2.0])) * 2)


# ---- wrong use: Keras-style errors, never a silent broadcast ----

@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv,
                                operator.lt, operator.eq, operator.pow])
def test_incompatible_shapes_raise_naming_both(op):
    # NumPy's ValueError ("operands could not be broadcast together with shapes (2,3) (4,)"),
    # raised before anything is computed.
    with pytest.raises(ValueError, match=r"\(2, ?3\).*\(4, ?\)"):
        op(T(np.ones((2, 3))), T(np.ones(4)))
    with pytest.raises(ValueError, match=r"\(4, ?\).*\(2, ?3\)"):
        op(np.ones(4), T(np.ones((2, 3))))


def test_matmul_inner_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"matmul.*\(2, 3\).*\(4, 2\)"):
        T(np.ones((2, 3))) @ T(np.ones((4, 2)))
    with pytest.raises(ValueError, match=r"matmul.*\(3, 2\).*\(4, 2\)"):
        np.ones((3, 2), np.float32) @ T(np.ones((4, 2)))


@pytest.mark.parametrize("sa,sb", [((5,), (2, 3)), ((2, 2, 3), (4, 2)), ((2, 3), (4,))])
def test_matmul_inner_mismatch_names_both_shapes_beyond_2d(sa, sb):
    with pytest.raises(ValueError, match=f"{re.escape(str(sa))}.*{re.escape(str(sb))}"):
        T(np.ones(sa)) @ T(np.ones(sb))


def test_int8_with_out_of_range_python_int_raises():
    # Keras on torch wraps silently (int8 3 + 1000 -> -21); fkeras refuses, as NumPy 2 and JAX.
    with pytest.raises(OverflowError, match="1000"):
        T(np.array([3], "int8")) + 1000
    y = T(np.array([3], "int8")) + 100
    assert y.dtype == np.int8 and int(y[0]) == 103


def test_comparison_with_none_and_none_operands():
    t = T(np.ones((2, 3)))
    assert (t == None) is False and (t != None) is True  # noqa: E711 (torch and TF agree)
    with pytest.raises(TypeError, match="None"):
        t + None
    with pytest.raises(TypeError, match="None"):
        ops.multiply(None, t)


@pytest.mark.parametrize("scalar,tensor_dtype,expect", [
    (np.int64(2), "int32", "int64"), (np.int32(2), "int32", "int32"),
    (np.int8(2), "int32", "int32"), (np.float64(2.0), "float32", "float32"),
    (np.float32(2.0), "int32", "float32"), (np.bool_(True), "int8", "int8"),
])
def test_numpy_scalars_are_strong_operands(scalar, tensor_dtype, expect):
    x = T(np.array([1, 3], tensor_dtype))
    for y in (scalar + x, x + scalar, x * scalar):
        assert y.dtype == np.dtype(expect)
    np.testing.assert_array_equal(scalar + x, np.array([1, 3], tensor_dtype) + scalar)


def test_format():
    assert f"{T(np.array(0.123456)):.3f}" == "0.123"
    assert f"{T(np.array([7], 'int32')):03d}" == "007"
    assert f"{T(np.ones(2))}" == str(T(np.ones(2)))
    with pytest.raises(TypeError, match=r"shape \(2,\)"):
        f"{T(np.ones(2)):.2f}"


def test_numpy_ufunc_without_an_op_refuses_a_differentiated_tensor():
    t = T(np.array([1.0, 2.0]))
    v = fkeras.Variable(np.array([1.0, 2.0]))
    assert type(np.log1p(t)) is np.ndarray  # no tape: NumPy computes on the buffer
    with fkeras.GradientTape() as tape:
        np.testing.assert_allclose(np.log1p(t), np.log1p([1.0, 2.0]))  # not watched
        tape.watch(t)
        for x in (t, v, t * 2.0):
            with pytest.raises(TypeError, match=r"np\.log1p.*fkeras\.ops\.log1p"):
                np.log1p(x)
        with pytest.raises(TypeError, match=r"np\.add\.reduce"):
            np.add.reduce(t)


def test_numpy_functions_on_tensors_run_as_ops_or_refuse_to_cut_the_tape():
    x = fkeras.Variable(np.array([-2.0, 0.5, 3.0], np.float32))
    with fkeras.GradientTape() as tape:
        y = np.sum(np.clip(x, -1, 1) * np.where(x.value > 0, 2.0, 1.0))
    assert isinstance(y, fkeras.Tensor)
    np.testing.assert_array_equal(np.asarray(tape.gradient(y, x)), [0.0, 2.0, 0.0])
    both = np.concatenate([x.value, x.value])
    assert isinstance(both, fkeras.Tensor) and both.shape == (6,)
    assert float(np.median(x.value)) == 0.5  # no op, no tape: computed by NumPy
    with fkeras.GradientTape():
        with pytest.raises(TypeError, match="np.median"):
            np.median(x * 2.0)
