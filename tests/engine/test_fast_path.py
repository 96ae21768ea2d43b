"""The eager fast path (fkeras._eager, engine/fast_path.py): the same results as the ops'
Python path, taken exactly when no tape or device scope is open and the operands are plain
float32 arrays/Tensors (or a Python number beside one)."""

import operator
import pickle
import threading

import numpy as np
import pytest

import fkeras
from fkeras import ops
from fkeras.backend import devices
from fkeras.engine import fast_path
from fkeras.engine.tensor import Tensor, array_mode

pytestmark = pytest.mark.skipif(fast_path.state() is None, reason="fkeras._eager not built")

RNG = np.random.default_rng(7)


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _slow(fn, *args):
    # A device scope sends every op down its Python path.
    with fkeras.device("cpu"):
        return fn(*args)


BINARY = {
    "ops.add": ops.add, "ops.subtract": ops.subtract, "ops.multiply": ops.multiply,
    "ops.divide": ops.divide, "ops.maximum": ops.maximum, "ops.minimum": ops.minimum,
    "ops.power": ops.power, "ops.equal": ops.equal, "ops.not_equal": ops.not_equal,
    "ops.less": ops.less, "ops.less_equal": ops.less_equal, "ops.greater": ops.greater,
    "ops.greater_equal": ops.greater_equal,
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "**": operator.pow, "<": operator.lt, "<=": operator.le, ">": operator.gt,
    ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
}
UNARY = {
    "ops.negative": ops.negative, "ops.exp": ops.exp, "ops.log": ops.log,
    "ops.sqrt": ops.sqrt, "ops.square": ops.square, "ops.absolute": ops.absolute,
    "ops.abs": ops.abs, "neg": operator.neg, "abs()": abs,
}
OPERANDS = {  # name: (x1, x2) builders; Tensors where the operator protocol needs one
    "same shape": lambda: (_f32(3, 4), _f32(3, 4)),
    "broadcast": lambda: (_f32(3, 1, 4), _f32(5, 1)),
    "0-d with array": lambda: (_f32(), _f32(2, 3)),
    "python float": lambda: (_f32(4, 4), 0.5),
    "python float first": lambda: (-1.5, _f32(4, 4)),
    "python int": lambda: (_f32(2, 5), 3),
    "nan scalar": lambda: (_f32(3), float("nan")),
    "inf scalar": lambda: (_f32(3), float("inf")),
    "beyond float32": lambda: (_f32(3), 1e300),
    "beyond int64": lambda: (_f32(3), 10 ** 40),
    "bool scalar": lambda: (_f32(3), True),
    "float64 array": lambda: (_f32(3), RNG.standard_normal(3)),
    "int array": lambda: (_f32(3), np.arange(3)),
    "non-contiguous": lambda: (_f32(4, 6)[:, ::2], _f32(4, 3)),
    "both 0-d": lambda: (_f32(), _f32()),
    "shape mismatch": lambda: (_f32(3), _f32(4)),
}


def _as_tensor(x):
    return Tensor(x) if isinstance(x, np.ndarray) else x


def _same(fast, slow):
    assert type(fast) is type(slow)
    a, b = np.asarray(fast), np.asarray(slow)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


def _outcome(fn, *args):
    try:
        return fn(*args), None
    except Exception as e:  # noqa: BLE001 - the two paths must fail alike
        return None, type(e)


@pytest.mark.parametrize("operands", list(OPERANDS))
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_matches_python_path(name, operands):
    x1, x2 = OPERANDS[operands]()
    fn = BINARY[name]
    if not name.startswith("ops."):  # operators: a Tensor on the left (or the right)
        x1, x2 = _as_tensor(x1), _as_tensor(x2)
        if not isinstance(x1, Tensor) and not isinstance(x2, Tensor):
            pytest.skip("no Tensor operand")
    with np.errstate(all="ignore"):
        fast, fast_err = _outcome(fn, x1, x2)
        slow, slow_err = _outcome(lambda a, b: _slow(fn, a, b), x1, x2)
    assert fast_err == slow_err
    if fast_err is None:
        _same(fast, slow)


@pytest.mark.parametrize("shape", [(3, 4), (), (1,), (0, 3)])
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_matches_python_path(name, shape):
    x = _f32(*shape)
    x = Tensor(x) if not name.startswith("ops.") else x
    with np.errstate(all="ignore"):
        _same(UNARY[name](x), _slow(UNARY[name], x))


@pytest.mark.parametrize("key", [0, -1, slice(1, 3), (1, slice(None)), (slice(None), 0),
                                 (Ellipsis, 1), (None, 0), (1, 2), ()])
@pytest.mark.parametrize("dtype", ["float32", "int64", "int32", "bool", "float64"])
def test_getitem_matches_python_path(key, dtype):
    t = Tensor(np.arange(24).reshape(4, 6).astype(dtype))
    _same(t[key], _slow(lambda a: a[key], t))


def _spy_op(kind=fast_path.BINARY):
    calls = []

    def fallback(*args):
        calls.append(args)
        return ops.add(*args)

    return fast_path.function(np.add, fallback, kind), calls


def test_fast_path_is_taken_for_plain_operands_and_not_otherwise():
    op, calls = _spy_op()
    a, b = _f32(2, 2), _f32(2, 2)
    out = op(a, b)
    assert type(out) is Tensor and calls == []
    op(Tensor(a), 2.0)
    assert calls == []
    with fkeras.GradientTape():
        op(a, b)
    assert len(calls) == 1
    with fkeras.device("cpu"):
        op(a, b)
    assert len(calls) == 2
    op(fkeras.Variable(a), b)  # a Variable: the Python path
    op(a.astype(np.float64), b)
    assert len(calls) == 4
    op(a, b)
    assert len(calls) == 4  # scopes closed: fast again


def test_array_mode_returns_bare_arrays():
    a, b = _f32(2, 3), _f32(2, 3)
    with array_mode():
        out = ops.add(a, b)
        assert fast_path.state()["array_mode"] == 1
    assert type(out) is np.ndarray
    np.testing.assert_array_equal(out, a + b)
    assert fast_path.state()["array_mode"] == 0


def test_default_device_other_than_cpu_blocks():
    op, calls = _spy_op()
    try:
        devices.set_device("reference")
        assert fast_path.state()["default_fast"] == 0
        op(_f32(2), _f32(2))
        assert len(calls) == 1
    finally:
        devices.set_device("cpu")
    assert fast_path.state()["default_fast"] == 1


def test_gradients_through_operators_are_recorded():
    x = Tensor(_f32(3, 4))
    with fkeras.GradientTape() as tape:
        tape.watch(x)
        y = ops.sum(-(x * x + 2.0 * x)[1:] / 3.0) + ops.sum(abs(x) ** 2)
    g = np.asarray(tape.gradient(y, x))
    xv = np.asarray(x, dtype=np.float64)
    expect = 2.0 * xv * 1.0
    expect[1:] += -(2.0 * xv[1:] + 2.0) / 3.0
    np.testing.assert_allclose(g, expect, rtol=1e-5, atol=1e-5)
    assert fast_path.state()["blocked"] == 0


def test_state_is_per_thread():
    seen = {}
    with fkeras.GradientTape():
        assert fast_path.state()["blocked"] == 1

        def other():
            seen["state"] = fast_path.state()
            seen["type"] = type(ops.add(_f32(2), _f32(2)))

        th = threading.Thread(target=other)
        th.start()
        th.join()
    assert seen["state"]["blocked"] == 0 and seen["state"]["array_mode"] == 0
    assert seen["type"] is Tensor


def test_scopes_unwind_on_exceptions():
    with pytest.raises(RuntimeError):
        with fkeras.GradientTape():
            with fkeras.device("cpu"):
                raise RuntimeError("boom")
    assert fast_path.state()["blocked"] == 0


def test_functions_keep_signature_name_and_pickle():
    import inspect

    assert str(inspect.signature(ops.add)) == "(x1, x2)"
    assert str(inspect.signature(ops.exp)) == "(x)"
    assert ops.greater.__name__ == "greater" and ops.add.__module__ == "fkeras.ops.math"
    assert pickle.loads(pickle.dumps(ops.add)) is ops.add
    assert Tensor.__add__(Tensor(np.ones(2, np.float32)), 1.0).numpy().tolist() == [2.0, 2.0]


def test_layout_self_check_passed():
    assert fast_path.state()["ready"] == 1


APPLY = {  # ops whose forward the C apply runs directly: name -> call on (a, b, i)
    "sum": lambda a, b, i: ops.sum(a), "sum axis": lambda a, b, i: ops.sum(a, axis=1),
    "mean keepdims": lambda a, b, i: ops.mean(a, axis=0, keepdims=True),
    "max": lambda a, b, i: ops.max(a, axis=-1), "min": lambda a, b, i: ops.min(a),
    "prod": lambda a, b, i: ops.prod(a, axis=0), "std": lambda a, b, i: ops.std(a),
    "reshape": lambda a, b, i: ops.reshape(a, (-1, 2)),
    "transpose": lambda a, b, i: ops.transpose(a),
    "expand_dims": lambda a, b, i: ops.expand_dims(a, 1),
    "squeeze": lambda a, b, i: ops.squeeze(ops.expand_dims(a, 0)),
    "where": lambda a, b, i: ops.where(a > 0, a, b), "clip": lambda a, b, i: ops.clip(a, -.5, .5),
    "concatenate": lambda a, b, i: ops.concatenate([a, b], axis=1),
    "stack": lambda a, b, i: ops.stack([a, b]), "split": lambda a, b, i: ops.split(a, 2, axis=1),
    "unstack": lambda a, b, i: ops.unstack(a), "argmax": lambda a, b, i: ops.argmax(a, axis=1),
    "argsort": lambda a, b, i: ops.argsort(a), "sort": lambda a, b, i: ops.sort(a, axis=0),
    "cumsum": lambda a, b, i: ops.cumsum(a, axis=1), "tanh": lambda a, b, i: ops.tanh(a),
    "sigmoid": lambda a, b, i: ops.sigmoid(a), "softmax": lambda a, b, i: ops.softmax(a),
    "relu": lambda a, b, i: ops.relu(a), "log_softmax": lambda a, b, i: ops.log_softmax(a),
    "logsumexp": lambda a, b, i: ops.logsumexp(a, axis=1),
    "matmul": lambda a, b, i: ops.matmul(a, ops.transpose(b)),
    "einsum": lambda a, b, i: ops.einsum("ij,kj->ik", a, b),
    "take": lambda a, b, i: ops.take(a, i, axis=0), "one_hot": lambda a, b, i: ops.one_hot(i, 5),
    "cast": lambda a, b, i: ops.cast(a, "int32"), "norm": lambda a, b, i: ops.norm(a),
    "sin": lambda a, b, i: ops.sin(a), "floor": lambda a, b, i: ops.floor(a),
    "pad": lambda a, b, i: ops.pad(a, [[1, 0], [0, 2]]), "tile": lambda a, b, i: ops.tile(a, 2),
    "flip": lambda a, b, i: ops.flip(a), "roll": lambda a, b, i: ops.roll(a, 1),
    "getitem int array": lambda a, b, i: ops.convert_to_tensor(a)[i],
    "getitem bool mask": lambda a, b, i: ops.convert_to_tensor(a)[a > 0],
    "getitem 0-d": lambda a, b, i: ops.convert_to_tensor(a)[1, 2],
    "top_k": lambda a, b, i: ops.top_k(a, 2), "isnan": lambda a, b, i: ops.isnan(a),
    "int add": lambda a, b, i: ops.add(i, i), "bool and": lambda a, b, i: ops.logical_and(a > 0, b > 0),
}


@pytest.mark.parametrize("name", list(APPLY))
def test_apply_fast_path_matches_python_path(name):
    a, b = _f32(4, 6), _f32(4, 6)
    i = np.array([3, 0, 2], dtype=np.int64)
    fast = APPLY[name](a, b, i)
    slow = _slow(APPLY[name], a, b, i)
    if isinstance(slow, (tuple, list)):
        assert type(fast) is type(slow) and len(fast) == len(slow)
        for f, s in zip(fast, slow):
            _same(f, s)
    else:
        _same(fast, slow)


def test_apply_takes_the_fast_path_only_for_plain_buffers():
    from fkeras.ops import registry

    calls = []

    def spy(*args, **kwargs):
        calls.append(args[0].name)
        return registry._apply_python(*args, **kwargs)

    fast_path.apply_function(spy, devices.get_device("cpu"))
    try:
        a = _f32(3, 3)
        ops.sum(a)
        ops.concatenate([a, Tensor(a)])
        assert calls == []
        ops.sum(a.astype(np.float64))       # float64: converted on the Python path
        ops.sum(np.asfortranarray(a))       # not C-contiguous
        ops.sum(fkeras.Variable(a))
        ops.sum([[1.0, 2.0]])               # a list
        assert calls == ["sum"] * 4
        with fkeras.GradientTape():
            ops.sum(a)
        assert calls[-1] == "sum" and len(calls) == 5
    finally:
        fast_path.apply_function(registry._apply_python, devices.get_device("cpu"))


def test_apply_output_never_aliases_an_input():
    a = _f32(3, 3)
    for fn in (ops.stop_gradient, lambda x: ops.cast(x, "float32")):
        out = fn(a)
        assert np.asarray(out) is not a
        np.testing.assert_array_equal(np.asarray(out), a)


def test_apply_errors_are_the_python_paths():
    a = _f32(3, 4)
    with pytest.raises(Exception) as fast:
        ops.reshape(a, (5, 7))
    with pytest.raises(Exception) as slow:
        _slow(ops.reshape, a, (5, 7))
    assert type(fast.value) is type(slow.value) and str(fast.value) == str(slow.value)


def test_random_ops_draw_once():
    gen = fkeras.random.SeedGenerator(3)
    ref = fkeras.random.SeedGenerator(3)
    a = _f32(64)
    fast = [np.asarray(fkeras.random.dropout(a, 0.5, seed=gen)) for _ in range(3)]
    slow = [np.asarray(_slow(lambda x: fkeras.random.dropout(x, 0.5, seed=ref), a))
            for _ in range(3)]
    for f, s in zip(fast, slow):
        np.testing.assert_array_equal(f, s)
