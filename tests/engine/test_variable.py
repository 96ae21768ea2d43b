"""fkeras.Variable: keras.Variable's surface (constructor forms, names, assign*, Python protocols),
its operators (values and finite-difference gradients in float64), watching by GradientTape,
and parity with real Keras 3 where Keras defines the behaviour."""

import operator
import re

import numpy as np
import pytest

import fkeras
from fkeras import ops
from fkeras.engine.tensor import Tensor, array_mode


def _fd_grad_check(f_var, f_np, a, rng, eps=1e-6, tol=1e-6):
    """Tape gradient of <cot, f_var(Variable(a))> against central differences of f_np (float64)."""
    with fkeras.device("reference"):
        v = fkeras.Variable(a)
        assert v.dtype == "float64"
        with fkeras.GradientTape() as tape:
            y = f_var(v)
        assert type(y) is Tensor
        np.testing.assert_allclose(np.asarray(y), f_np(a), rtol=1e-12)
        cot = rng.standard_normal(y.shape)
        g = tape.gradient(y, v, output_gradients=cot)
    d = rng.standard_normal(a.shape)
    numeric = (np.sum(cot * f_np(a + eps * d)) - np.sum(cot * f_np(a - eps * d))) / (2 * eps)
    analytic = float(np.sum(np.asarray(g) * d))
    assert abs(numeric - analytic) <= tol * max(1.0, abs(numeric)), (numeric, analytic)


# ---- constructor forms ----

@pytest.mark.parametrize("init,kwargs,shape,dtype,value", [
    (np.ones((2, 3), np.float32), {}, (2, 3), "float32", 1.0),
    (np.ones((2, 3)), {}, (2, 3), "float32", 1.0),   # float64 data: the device float dtype
    ([[1.5, 2.5]], {}, (1, 2), "float32", None),
    (2.5, {}, (), "float32", 2.5),
    (3, {}, (), "int32", 3),
    (True, {}, (), "bool", True),
    (np.arange(3, dtype=np.int64), {}, (3,), "int64", None),
    (np.ones(3), {"dtype": "float16"}, (3,), "float16", 1.0),
    ("ones", {"shape": (2, 2)}, (2, 2), "float32", 1.0),
    ("zeros", {"shape": [3], "dtype": "int32"}, (3,), "int32", 0),
    (fkeras.initializers.Constant(0.5), {"shape": (2,)}, (2,), "float32", 0.5),
    (lambda shape, dtype=None: np.full(shape, 7.0), {"shape": (1, 2)}, (1, 2), "float32", 7.0),
], ids=["f32", "f64_array", "list", "float", "int", "bool", "int64_array", "dtype_arg",
        "str_initializer", "str_initializer_int", "initializer_object", "callable"])
def test_constructor_forms(init, kwargs, shape, dtype, value):
    v = fkeras.Variable(init, **kwargs)
    assert v.shape == shape and v.dtype == dtype and v.ndim == len(shape)
    expect = np.asarray(init, dtype) if value is None else np.full(shape, value, dtype)
    np.testing.assert_array_equal(v.numpy(), expect)
    assert v.numpy().dtype == np.dtype(dtype)


def test_constructor_copies_its_initial_value():
    a = np.ones(3, np.float32)
    v = fkeras.Variable(a)
    a[0] = 5.0
    assert v.numpy()[0] == 1.0
    w = fkeras.Variable(v)  # from another variable
    v.assign_add(1.0)
    np.testing.assert_array_equal(w.numpy(), [1.0, 1.0, 1.0])


@pytest.mark.parametrize("kwargs,match", [
    ({"initializer": "ones"}, "the `shape` argument should be specified"),
    ({"initializer": fkeras.initializers.Ones()}, "the `shape` argument should be specified"),
    ({"initializer": 1.0, "name": "a/b"}, "cannot contain character `/`"),
    ({"initializer": 1.0, "name": 3}, "must be a string"),
    ({"initializer": 1.0, "aggregation": "max"}, "aggregation"),
])
def test_constructor_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        fkeras.Variable(**kwargs)


def test_auto_names_and_path():
    a, b, c = fkeras.Variable(1.0), fkeras.Variable(2.0), fkeras.Variable(3.0, name="w")
    assert (a.name, b.name, c.name) == ("variable", "variable_1", "w")
    assert (a.path, c.path) == ("variable", "w")
    assert fkeras.Variable(1.0, name="k", path="dense/k").path == "dense/k"
    layer = fkeras.layers.Dense(2, name="head")
    layer.build((None, 3))
    assert [w.path for w in layer.weights] == ["head/kernel", "head/bias"]


# ---- assign, assign_add, assign_sub ----

def test_assign_exact_shape_dtype_cast_in_place():
    v = fkeras.Variable(np.zeros((2, 3), np.float32))
    buf = v._value
    out = v.assign(np.arange(6.0).reshape(2, 3))  # float64 value, cast to float32
    assert type(out) is Tensor and v._value is buf and v.dtype == "float32"
    np.testing.assert_array_equal(v.numpy(), np.arange(6.0).reshape(2, 3))
    v.assign(fkeras.ops.convert_to_tensor(np.ones((2, 3))))
    v.assign(fkeras.Variable(np.full((2, 3), 2.0)))
    np.testing.assert_array_equal(v.numpy(), np.full((2, 3), 2.0))
    iv = fkeras.Variable(np.zeros(2, np.int32))
    iv.assign(np.array([1.7, -2.2]))
    assert iv.dtype == "int32"
    np.testing.assert_array_equal(iv.numpy(), [1, -2])


@pytest.mark.parametrize("value_shape", [(3,), (1, 3), (2, 3, 1), (3, 2), ()])
def test_assign_wrong_shape_raises(value_shape):
    v = fkeras.Variable(np.zeros((2, 3), np.float32), name="w")
    expect = re.escape(f"must match. variable.shape=(2, 3), Received: value.shape={value_shape}")
    with pytest.raises(ValueError, match=expect):
        v.assign(np.ones(value_shape))
    np.testing.assert_array_equal(v.numpy(), 0.0)  # untouched


@pytest.mark.parametrize("method,ufunc", [("assign_add", np.add), ("assign_sub", np.subtract)])
@pytest.mark.parametrize("value_shape", [(2, 3), (3,), (1, 3), (2, 1), ()])
def test_assign_add_sub_broadcast(method, ufunc, value_shape):
    rng = np.random.default_rng(0)
    start = rng.standard_normal((2, 3)).astype(np.float32)
    value = rng.standard_normal(value_shape)
    v = fkeras.Variable(start)
    out = getattr(v, method)(value)
    expect = ufunc(start, value.astype(np.float32))
    np.testing.assert_allclose(v.numpy(), expect, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(out), expect, rtol=1e-6)
    getattr(v, method)(2)  # a Python number
    np.testing.assert_allclose(v.numpy(), ufunc(expect, 2.0), rtol=1e-6)


@pytest.mark.parametrize("method", ["assign_add", "assign_sub"])
@pytest.mark.parametrize("value_shape", [(4,), (2, 2, 3), (3, 3)])
def test_assign_add_sub_wrong_shape_raises(method, value_shape):
    v = fkeras.Variable(np.zeros((2, 3), np.float32), name="w")
    with pytest.raises(ValueError, match=rf"{method}.*'w'.*\(2, 3\)"):
        getattr(v, method)(np.ones(value_shape))
    np.testing.assert_array_equal(v.numpy(), 0.0)


def test_assign_rejects_strings_and_symbolic_values():
    v = fkeras.Variable(np.zeros(2, np.float32))
    with pytest.raises(ValueError, match="dtype"):
        v.assign(np.array(["a", "b"]))
    with pytest.raises(ValueError, match="symbolic"):
        v.assign(fkeras.Input((2,)))


# ---- value, numpy, protocols ----

def test_value_is_a_tensor_and_numpy_a_copy():
    v = fkeras.Variable(np.ones(3, np.float32))
    assert type(v.value) is Tensor and v.value._value is v._value
    with array_mode():
        assert v.value is v._value
    n = v.numpy()
    n[0] = 9.0
    assert v.numpy()[0] == 1.0
    np.testing.assert_array_equal(np.asarray(v), [1.0, 1.0, 1.0])
    assert np.asarray(v, dtype=np.float64).dtype == np.float64


def test_python_protocols():
    v = fkeras.Variable(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="cannot be used as a boolean"):
        bool(v)
    with pytest.raises(TypeError, match="cannot be used as a boolean"):
        bool(fkeras.Variable(1.0))
    with pytest.raises(TypeError, match="unhashable"):
        hash(v)
    with pytest.raises(TypeError, match="len"):
        len(v)
    with pytest.raises(TypeError, match=r"shape=\(2, 3\)"):
        float(v)
    rows = list(v)  # as keras.Variable: its first axis
    assert len(rows) == 2 and all(type(r) is Tensor and r.shape == (3,) for r in rows)
    with pytest.raises(TypeError, match="0-d"):
        iter(fkeras.Variable(1.0))
    assert float(fkeras.Variable(2.5)) == 2.5 and int(fkeras.Variable(2.5)) == 2
    assert int(fkeras.Variable(3)) == 3
    assert [10, 20, 30, 40][fkeras.Variable(2)] == 30
    with pytest.raises(TypeError, match="integer"):
        [1, 2][fkeras.Variable(1.0)]


def test_repr():
    v = fkeras.Variable(np.array([1.0, 2.0], np.float32), name="w")
    assert repr(v) == "<Variable path=w, shape=(2,), dtype=float32, value=[1. 2.]>"


def test_trainable_toggle_and_watch():
    v = fkeras.Variable(np.ones(3, np.float32))
    assert v.trainable
    v.trainable = False
    with fkeras.GradientTape() as tape:
        y = ops.sum(v * v)
    assert tape.gradient(y, v) is None
    v.trainable = True
    with fkeras.GradientTape() as tape:
        y = ops.sum(v * v)
    np.testing.assert_array_equal(tape.gradient(y, v), [2.0, 2.0, 2.0])


@pytest.mark.parametrize("read", [
    lambda v: v * 3.0, lambda v: 3.0 * v, lambda v: v.value * 3.0, lambda v: +v * 3.0,
    lambda v: ops.multiply(v, 3.0), lambda v: np.multiply(v, 3.0), lambda v: v[:] * 3.0,
], ids=["op", "reflected", "value", "pos", "ops_fn", "ufunc", "getitem"])
def test_reading_a_trainable_variable_inside_a_tape_watches_it(read):
    v = fkeras.Variable(np.array([1.0, 2.0], np.float32))
    with fkeras.GradientTape() as tape:
        y = read(v)
    np.testing.assert_array_equal(tape.gradient(y, v), [3.0, 3.0])


@pytest.mark.parametrize("make", [
    lambda: fkeras.Variable(np.ones(2, np.float32), trainable=False),
    lambda: fkeras.Variable(np.ones(2, np.int32)),
], ids=["non_trainable", "integer"])
def test_non_trainable_and_integer_variables_are_not_watched(make):
    v = make()
    with fkeras.GradientTape() as tape:
        y = ops.sum(v * 2.0)
    assert tape.gradient(y, v) is None
    assert all(w is not v._value for w in tape.watched_variables())


def test_explicit_watch_of_a_non_trainable_variable():
    v = fkeras.Variable(np.ones(2, np.float32), trainable=False)
    with fkeras.GradientTape() as tape:
        tape.watch(v)
        y = ops.sum(v * 2.0)
    np.testing.assert_array_equal(tape.gradient(y, v), [2.0, 2.0])


# ---- operators on a Variable: values and gradients (float64, finite differences) ----

BINARY = [("add", operator.add), ("sub", operator.sub), ("mul", operator.mul),
          ("truediv", operator.truediv), ("floordiv", operator.floordiv),
          ("mod", operator.mod), ("pow", operator.pow)]


@pytest.mark.parametrize("other_kind", ["scalar", "ndarray", "tensor"])
@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("name,op", BINARY, ids=[b[0] for b in BINARY])
def test_binary_operators_values_and_gradients(name, op, side, other_kind):
    rng = np.random.default_rng(1)
    a = rng.uniform(0.5, 2.0, (2, 3))
    b = 1.3 if other_kind == "scalar" else rng.uniform(0.5, 2.0, (3,))
    wrap = (lambda z: ops.convert_to_tensor(z)) if other_kind == "tensor" else (lambda z: z)
    if side == "left":  # the Variable on the left
        _fd_grad_check(lambda v: op(v, wrap(b)), lambda x: op(x, b), a, rng)
    else:
        _fd_grad_check(lambda v: op(wrap(b), v), lambda x: op(b, x), a, rng)


@pytest.mark.parametrize("form", ["var_at_ndarray", "ndarray_at_var", "var_at_var"])
def test_matmul(form):
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    if form == "var_at_ndarray":
        _fd_grad_check(lambda v: v @ b, lambda x: x @ b, a, rng)
    elif form == "ndarray_at_var":
        _fd_grad_check(lambda v: b.T @ v.T, lambda x: b.T @ x.T, a, rng)
    else:
        _fd_grad_check(lambda v: v @ v.T, lambda x: x @ x.T, a, rng)


@pytest.mark.parametrize("name,f", [
    ("neg", operator.neg), ("pos", operator.pos), ("abs", abs),
    ("getitem_int", lambda x: x[1]), ("getitem_slice", lambda x: x[:, ::-2]),
    ("getitem_array", lambda x: x[[1, 1, 0]]), ("getitem_none", lambda x: x[None, ..., 0]),
    ("getitem_mask", lambda x: x[np.array([[True, False, True], [False, True, True]])]),
])
def test_unary_and_getitem(name, f):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 3)) + np.array([0.5, -0.5, 1.0])  # away from 0 for abs
    _fd_grad_check(f, f, a, rng)


def test_comparisons_and_bitwise_on_variables():
    v = fkeras.Variable(np.array([1.0, 2.0, 3.0], np.float32))
    for op, ref in [(operator.eq, np.equal), (operator.ne, np.not_equal),
                    (operator.lt, np.less), (operator.le, np.less_equal),
                    (operator.gt, np.greater), (operator.ge, np.greater_equal)]:
        for y, expect in [(op(v, 2.0), ref(v.numpy(), 2.0)), (op(2.0, v), ref(2.0, v.numpy())),
                          (op(np.full(3, 2.0), v), ref(np.full(3, 2.0), v.numpy()))]:
            assert type(y) is Tensor and y.dtype == np.bool_
            np.testing.assert_array_equal(y, expect)
    b = fkeras.Variable(np.array([True, False, True]))
    i = fkeras.Variable(np.array([1, 6, 3], np.int32))
    np.testing.assert_array_equal(b & np.array([True, True, False]), [True, False, False])
    np.testing.assert_array_equal(True ^ b, [False, True, False])
    np.testing.assert_array_equal(~b, [False, True, False])
    np.testing.assert_array_equal(i | 4, [5, 6, 7])
    np.testing.assert_array_equal(~i, [-2, -7, -4])
    assert (i // 2).dtype == np.int32 and (i % 4).dtype == np.int32


def test_integer_variable_true_division_is_float32():
    i = fkeras.Variable(np.array([1, 6, 3], np.int32))
    assert (i / 2).dtype == np.float32


def test_variable_operands_keep_promotion_rules():
    i8 = fkeras.Variable(np.array([1, 2], np.int8))
    assert (i8 + 1).dtype == np.int8
    assert (i8 + 1.5).dtype == np.float32
    assert (fkeras.Variable(np.ones(2, np.float32)) + np.ones(2)).dtype == np.float32


# ---- parity with real keras.Variable ----

def test_keras_parity_of_errors_and_repr():
    keras = pytest.importorskip("keras")
    keras.utils.clear_session()
    fkeras.utils.clear_session()
    k1, k2 = keras.Variable(1.0), keras.Variable(2.0)
    f1, f2 = fkeras.Variable(1.0), fkeras.Variable(2.0)
    assert (k1.name, k2.name) == (f1.name, f2.name)
    kv = keras.Variable(np.array([1.0, 2.0], np.float32), name="w")
    fv = fkeras.Variable(np.array([1.0, 2.0], np.float32), name="w")
    assert repr(kv) == repr(fv)
    assert repr(keras.Variable(2.0, name="s")) == repr(fkeras.Variable(2.0, name="s"))

    def error(fn):
        with pytest.raises(Exception) as info:
            fn()
        return info.type, str(info.value)

    for action in [bool, hash, len]:
        assert error(lambda: action(kv)) == error(lambda: action(fv)), action
    assert error(lambda: float(kv))[0] is error(lambda: float(fv))[0] is TypeError
    assert float(keras.Variable(2.5)) == float(fkeras.Variable(2.5))
    kt, ft = error(lambda: keras.Variable(1.0, name="a/b")), error(
        lambda: fkeras.Variable(1.0, name="a/b"))
    assert kt == ft
    kt, ft = error(lambda: kv.assign(np.ones(3))), error(lambda: fv.assign(np.ones(3)))
    prefix = "The shape of the target variable and the shape of the target value"
    assert kt[0] is ft[0] is ValueError and kt[1].startswith(prefix) and ft[1].startswith(prefix)
    kt, ft = error(lambda: keras.Variable("ones")), error(lambda: fkeras.Variable("ones"))
    assert kt[0] is ft[0] is ValueError
    assert kt[1].split("Received")[0] == ft[1].split("Received")[0]
    np.testing.assert_array_equal([keras.ops.convert_to_numpy(r) for r in kv],
                                  [np.asarray(r) for r in fv])


@pytest.mark.parametrize("name,op", BINARY + [("matmul", operator.matmul)],
                         ids=[b[0] for b in BINARY] + ["matmul"])
def test_keras_parity_of_operator_values_and_gradients(name, op):
    keras = pytest.importorskip("keras")
    if keras.backend.backend() != "torch":
        pytest.skip("gradients taken with torch")
    import torch

    rng = np.random.default_rng(4)
    a = rng.uniform(0.5, 2.0, (3, 3)).astype(np.float32)
    b = rng.uniform(0.5, 2.0, (3, 3)).astype(np.float32)
    cot = rng.standard_normal((3, 3)).astype(np.float32)
    kv = keras.Variable(a)
    ky = op(kv, b) + op(keras.ops.convert_to_tensor(b.T), kv)
    fv = fkeras.Variable(a)
    with fkeras.GradientTape() as tape:
        fy = op(fv, b) + op(b.T, fv)
    fg = tape.gradient(fy, fv, output_gradients=cot)
    np.testing.assert_allclose(np.asarray(fy), ky.detach().numpy(), rtol=1e-5, atol=1e-6)
    if name == "floordiv":  # torch has no derivative for floor_divide; fkeras gives zeros (JAX)
        np.testing.assert_array_equal(fg, 0.0)
        return
    (kg,) = torch.autograd.grad((ky * torch.as_tensor(cot)).sum(), [kv.value])
    np.testing.assert_allclose(np.asarray(fg), kg.numpy(), rtol=1e-4, atol=1e-5)


def test_round_is_elementwise_half_to_even():
    v = fkeras.Variable(np.array([1.26, 2.5, -0.5], np.float32))
    np.testing.assert_array_equal(round(v), [1.0, 2.0, -0.0])
    np.testing.assert_allclose(round(v, 1), [1.3, 2.5, -0.5])
    t = ops.convert_to_tensor(np.array([0.5, 1.5]))
    assert type(round(t)) is Tensor
    np.testing.assert_array_equal(round(t), [0.0, 2.0])


def test_float64_ndarray_on_the_left_of_a_float32_variable():
    # The NumPy array is cast to float32 (a new buffer); the Variable stays on the tape.
    v = fkeras.Variable(np.array([1.0, 2.0, 3.0], np.float32))
    a = np.array([0.5, 0.25, 2.0])  # float64
    with fkeras.GradientTape() as tape:
        y = (a - v) * (a @ v)
    assert type(y) is Tensor and y.dtype == np.float32
    expect = -(a @ v.numpy()) + a * np.sum(a - v.numpy())
    np.testing.assert_allclose(tape.gradient(y, v), expect, rtol=1e-6)
