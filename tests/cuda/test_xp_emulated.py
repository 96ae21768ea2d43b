"""The array namespace (`dev.xp`) and the ops written against it, on the emulated cuda device.

`emulated_cuda` stands in for `fkeras._C_cuda` (its buffers refuse NumPy, its xp kernels
compute as the GPU's: float32 elementwise, reductions accumulated in float64). Checked here:
`CudaXP` against NumPy; each converted op on the device against the cpu result, values and
gradients, with no op run on the host; models using them trained on the device against the
cpu training. The CUDA kernels themselves are checked by test_xp_gpu.py (on a GPU) and
test_xp_math_host.py (their math, on the CPU).
"""

import numpy as np
import pytest

import emulated_cuda
import fkeras
from fkeras import ops
from fkeras.backend import devices
from fkeras.engine.tensor import Tensor
from fkeras.ops import device_dispatch

L = fkeras.layers


@pytest.fixture
def cuda(monkeypatch):
    emulated_cuda.install(monkeypatch)
    return devices.get_device("cuda")


def _rand(shape, seed, positive=False, low=None):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    if positive:
        x = np.abs(x) + np.float32(0.5 if low is None else low)
    return x


def _host(x):
    return x.to_host() if hasattr(x, "to_host") and not isinstance(x, np.ndarray) else np.asarray(x)


# ---- the namespace against NumPy ----

BROADCASTS = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((5,), ()), ((), (2, 3)),
              ((0, 3), (3,)), ((1,), (7,)), ((4, 1), 2.5), (1.5, (3,))]
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "equal",
          "less", "less_equal", "greater", "greater_equal", "not_equal"]


def _operand(cuda, spec, seed, positive=False):
    if isinstance(spec, float):
        return spec, spec
    a = _rand(spec, seed, positive)
    return cuda.asarray(a), a


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("sa, sb", BROADCASTS)
def test_xp_binary_equals_numpy(cuda, name, sa, sb):
    da, a = _operand(cuda, sa, 1, positive=name == "power")
    db, b = _operand(cuda, sb, 2)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a, b)
    got = _host(getattr(cuda.xp, name)(da, db))
    assert got.dtype == np.float32 and got.shape == np.shape(want)
    np.testing.assert_array_equal(got, want.astype(np.float32))  # masks: 1.0 / 0.0


@pytest.mark.parametrize("name", ["negative", "abs", "square", "sqrt", "exp", "log", "sign"])
@pytest.mark.parametrize("shape", [(), (1,), (7,), (3, 11), (0, 4)])
def test_xp_unary_equals_numpy(cuda, name, shape):
    x = _rand(shape, 3, positive=name in ("sqrt", "log"))
    np.testing.assert_array_equal(_host(getattr(cuda.xp, name)(cuda.asarray(x))),
                                  getattr(np, name)(x))


class _NoWarnings:
    def __enter__(self):
        import warnings

        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        self._w.__exit__(*exc)


REDUCTIONS = [((4, 5), None, False), ((4, 5), 0, True), ((2, 3, 4), -1, False),
              ((2, 3, 4), (0, 2), True), ((2, 3, 4), (-3, -1), False), ((3, 1, 2), 1, True),
              ((7,), 0, False), ((33, 9), [1], False), ((0, 3), 1, False), ((0, 3), 0, True)]


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("shape, axis, keepdims", REDUCTIONS)
def test_xp_reductions_match_numpy_float64(cuda, name, shape, axis, keepdims):
    x = _rand(shape, 4) * 3 + 1
    ax = tuple(axis) if isinstance(axis, list) else axis
    if x.size == 0 and name in ("max", "min"):
        with pytest.raises(ValueError, match="zero-size"):
            getattr(cuda.xp, name)(cuda.asarray(x), axis=axis, keepdims=keepdims)
        return
    with np.errstate(all="ignore"), _NoWarnings():
        ref = getattr(np, name)(x.astype(np.float64), axis=ax, keepdims=keepdims)
    got = _host(getattr(cuda.xp, name)(cuda.asarray(x), axis=axis, keepdims=keepdims))
    assert got.shape == np.shape(ref) and got.dtype == np.float32
    # float64 accumulation rounded once: the float32 rounding of the float64 result
    np.testing.assert_array_equal(got, np.asarray(ref, np.float32))


def test_xp_reductions_check_axes(cuda):
    x = cuda.asarray(_rand((2, 3), 5))
    with pytest.raises(ValueError, match="out of bounds"):
        cuda.xp.sum(x, axis=2)
    with pytest.raises(ValueError, match="duplicate"):
        cuda.xp.mean(x, axis=(0, -2))


@pytest.mark.parametrize("shapes, axis", [([(2, 3), (2, 4)], -1), ([(1, 3), (2, 3)], 0),
                                          ([(2, 0, 3), (2, 2, 3), (2, 1, 3)], 1),
                                          ([(3,), (0,), (5,)], 0), ([(2, 2), (2, 2)], None)])
def test_xp_concatenate_and_split(cuda, shapes, axis):
    xs = [_rand(s, i) for i, s in enumerate(shapes)]
    got = cuda.xp.concatenate([cuda.asarray(x) for x in xs], axis=axis)
    want = np.concatenate(xs, axis=axis)
    np.testing.assert_array_equal(_host(got), want)
    if axis is not None:
        cuts = np.cumsum([x.shape[axis] for x in xs])[:-1]
        for p, q in zip(cuda.xp.split(got, cuts, axis=axis), np.split(want, cuts, axis=axis)):
            np.testing.assert_array_equal(_host(p), q)


def test_xp_concatenate_keeps_integer_dtypes(cuda):
    a, b = np.arange(6, dtype=np.int64).reshape(2, 3), np.arange(4, dtype=np.int64).reshape(2, 2)
    got = _host(cuda.xp.concatenate([cuda.asarray(a), cuda.asarray(b)], axis=1))
    np.testing.assert_array_equal(got, np.concatenate([a, b], axis=1))


def test_xp_where_broadcast_to_and_errors(cuda):
    xp = cuda.xp
    c, x, y = _rand((4, 1), 6) > 0, _rand((1, 5), 7), _rand((), 8)
    got = xp.where(xp.greater(cuda.asarray(_rand((4, 1), 6)), 0.0), cuda.asarray(x),
                   cuda.asarray(y))
    np.testing.assert_array_equal(_host(got), np.where(c, x, y))
    np.testing.assert_array_equal(_host(xp.where(cuda.asarray(c), 1.0, cuda.asarray(x))),
                                  np.where(c, np.float32(1.0), x))
    np.testing.assert_array_equal(_host(xp.broadcast_to(cuda.asarray(x), (3, 4, 5))),
                                  np.broadcast_to(x, (3, 4, 5)))
    with pytest.raises(ValueError, match="broadcast"):
        xp.add(cuda.asarray(_rand((2, 3), 1)), cuda.asarray(_rand((4,), 1)))
    with pytest.raises(TypeError, match="float32"):
        xp.add(cuda.asarray(np.arange(3)), 1.0)
    with pytest.raises(TypeError, match="DeviceArray"):
        xp.multiply(np.ones(3, np.float32), 2.0)  # a host array handed to the device
    with pytest.raises(ValueError, match="rank"):
        xp.add(cuda.asarray(np.ones((1,) * 9, np.float32)), 1.0)
    assert xp.ascontiguousarray(got) is got


# ---- ops on the device against the cpu: values and gradients ----

def _run(device, fn, arrays, cuda=None):
    """fn(*tensors) on `device` under a tape; its value and the gradients of sum(y * w)."""
    with fkeras.device(device):
        ts = [Tensor(cuda.asarray(a)) if cuda is not None else Tensor(a) for a in arrays]
        with fkeras.GradientTape() as tape:
            for t in ts:
                tape.watch(t)
            y = fn(*ts)
            w = _rand(tuple(y.shape), 99)
            target = ops.sum(ops.multiply(y, Tensor(cuda.asarray(w) if cuda else w)))
        grads = tape.gradient(target, ts)
    return _host(y._value), [None if g is None else _host(g._value) for g in grads]


def _compare(cuda, fn, arrays, exact=True):
    device_dispatch.reset_host_op_calls()
    y_dev, g_dev = _run("cuda", fn, arrays, cuda)
    assert device_dispatch.host_op_calls() == {}
    y_cpu, g_cpu = _run("cpu", fn, arrays)
    check = np.testing.assert_array_equal if exact else \
        (lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7))
    assert y_dev.shape == y_cpu.shape
    check(y_dev, y_cpu)
    for gd, gc in zip(g_dev, g_cpu):
        if gc is None:  # y_true of an asymmetric loss: no gradient on either device
            assert gd is None
            continue
        assert gd.shape == gc.shape
        check(gd, gc)


OP_BROADCASTS = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((5,), ()),
                 ((0, 3), (3,)), ((1,), (7,))]


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "maximum", "minimum",
                                  "power"])
@pytest.mark.parametrize("sa, sb", OP_BROADCASTS)
def test_binary_ops_on_device_equal_cpu(cuda, name, sa, sb):
    a = _rand(sa, 11, positive=name == "power")
    b = _rand(sb, 12, positive=name == "divide")
    if name in ("maximum", "minimum") and a.size and b.size:
        a.reshape(-1)[0] = b.reshape(-1)[0]  # a tie: the gradient goes to x1
    # a broadcast operand's gradient is a sum (float64-accumulated on the device)
    _compare(cuda, getattr(ops, name), [a, b], exact=sa == sb)


@pytest.mark.parametrize("name", ["negative", "exp", "log", "sqrt", "square", "absolute"])
@pytest.mark.parametrize("shape", [(), (7,), (3, 5), (0, 2)])
def test_unary_ops_on_device_equal_cpu(cuda, name, shape):
    x = _rand(shape, 13, positive=name in ("log", "sqrt"))
    _compare(cuda, getattr(ops, name), [x])


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("shape, axis, keepdims", [((4, 5), None, False), ((4, 5), 0, True),
                                                   ((2, 3, 4), -1, False),
                                                   ((2, 3, 4), [0, 2], True),
                                                   ((3, 1, 2), 1, False), ((0, 3), 1, False)])
def test_reduction_ops_on_device_equal_cpu(cuda, name, shape, axis, keepdims):
    x = _rand(shape, 14)
    if name in ("max", "min"):
        if x.size == 0:
            pytest.skip("max/min of an empty tensor raise (tested in tests/ops)")
        x.reshape(-1)[1] = x.reshape(-1)[0]  # ties share the gradient
    _compare(cuda, lambda t: getattr(ops, name)(t, axis=axis, keepdims=keepdims), [x],
             exact=name in ("max", "min"))


@pytest.mark.parametrize("shapes, axis", [([(2, 3), (2, 4)], -1), ([(1, 3), (2, 3)], 0),
                                          ([(2, 0, 3), (2, 2, 3), (2, 1, 3)], 1)])
def test_concatenate_on_device_equals_cpu(cuda, shapes, axis):
    xs = [_rand(s, 20 + i) for i, s in enumerate(shapes)]
    _compare(cuda, lambda *ts: ops.concatenate(list(ts), axis=axis), xs)


@pytest.mark.parametrize("bounds", [(-0.5, 0.5), (None, 0.0), (0.0, None), (-1, 1)])
@pytest.mark.parametrize("shape", [(), (7,), (3, 5)])
def test_clip_on_device_equals_cpu(cuda, bounds, shape):
    x = _rand(shape, 43)
    if x.size > 1:
        x.reshape(-1)[:2] = [0.5, 0.0]  # on a bound: the gradient passes
    _compare(cuda, lambda t: ops.clip(t, *bounds), [x])


@pytest.mark.parametrize("sc, s1, s2", [((3, 4), (3, 4), (3, 4)), ((3, 1), (1, 4), ()),
                                        ((5,), (2, 5), (5,))])
@pytest.mark.parametrize("cond_dtype", ["bool", "float32"])
def test_where_on_device_equals_cpu(cuda, sc, s1, s2, cond_dtype):
    cond = (_rand(sc, 40) > 0).astype(cond_dtype)
    device_dispatch.reset_host_op_calls()
    with fkeras.device("cuda"):
        c = Tensor(cuda.asarray(cond))
        got = _run("cuda", lambda a, b: ops.where(c, a, b), [_rand(s1, 41), _rand(s2, 42)], cuda)
    assert device_dispatch.host_op_calls() == {}
    want = _run("cpu", lambda a, b: ops.where(cond, a, b), [_rand(s1, 41), _rand(s2, 42)])
    np.testing.assert_array_equal(got[0], want[0])
    for gd, gc in zip(got[1], want[1]):  # a broadcast operand's gradient: a float64 sum
        np.testing.assert_allclose(gd, gc, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("loss", ["mean_squared_error", "mean_absolute_error",
                                  "mean_absolute_percentage_error",
                                  "mean_squared_logarithmic_error", "huber"])
@pytest.mark.parametrize("shape", [(6, 1), (4, 5), (2, 3, 4)])
def test_elementwise_losses_on_device_equal_cpu(cuda, loss, shape):
    t = _rand(shape, 30, positive=True, low=0.1) - np.float32(0.5)
    p = _rand(shape, 31) * 2
    fn = getattr(fkeras.losses, loss)
    _compare(cuda, lambda tt, pp: fn(tt, pp), [t, p], exact=shape[-1] == 1)


@pytest.mark.parametrize("loss, kwargs", [("poisson", {}), ("kl_divergence", {}),
                                          ("binary_crossentropy", {}),
                                          ("binary_crossentropy", {"from_logits": True})])
@pytest.mark.parametrize("shape", [(6, 1), (4, 5), (2, 3, 4)])
def test_probability_losses_on_device_equal_cpu(cuda, loss, kwargs, shape):
    rng = np.random.default_rng(32)
    t = rng.uniform(0.0, 1.0, shape).astype(np.float32)
    p = rng.uniform(-0.1, 1.1, shape).astype(np.float32)  # some outside the clip range
    if kwargs:
        p = (p - 0.5) * 8
    if loss == "poisson":
        p = np.abs(p) + np.float32(0.01)  # rates
    fn = getattr(fkeras.losses, loss)
    _compare(cuda, lambda tt, pp: fn(tt, pp, **kwargs), [t, p],
             exact=shape[-1] == 1 and not kwargs)


def test_int_inputs_stay_on_the_host(cuda):
    # xp computes on float32: an integer op on the device runs on the host (same result).
    with fkeras.device("cuda"):
        device_dispatch.reset_host_op_calls()
        out = ops.add(Tensor(cuda.asarray(np.arange(4))), Tensor(cuda.asarray(np.arange(4))))
    assert device_dispatch.host_op_calls() == {"add": 1}
    np.testing.assert_array_equal(_host(out._value), np.arange(4) * 2)


# ---- models using them, trained on the device against the cpu ----

def _residual_mlp():
    inp = fkeras.Input((8,))
    h = L.Dense(16, activation="relu")(inp)
    h2 = L.Dense(16)(h)
    return fkeras.Model(inp, L.Dense(1)(L.Add()([h, h2]))), "mse"


def _l2_regression():
    return fkeras.Sequential([fkeras.Input((6,)), L.Dense(8, activation="relu",
                                                            kernel_regularizer="l2"),
                              L.Dense(1, kernel_regularizer="l1_l2")]), "mse"


def _gap_cnn():
    return fkeras.Sequential([fkeras.Input((8, 8, 2)), L.Conv2D(4, 3, padding="same"),
                              L.GlobalAveragePooling2D(),
                              L.Dense(10, activation="softmax")]), \
        "sparse_categorical_crossentropy"


def _text():
    inp = fkeras.Input((12,), dtype="int32")
    e = L.Embedding(50, 8)(inp)
    c = L.Concatenate()([L.GlobalAveragePooling1D()(e), L.GlobalMaxPooling1D()(e)])
    return fkeras.Model(inp, L.Dense(10, activation="softmax")(c)), \
        "sparse_categorical_crossentropy"


def _data(kind, seed):
    rng = np.random.default_rng(seed)
    if kind == "text":
        return rng.integers(0, 50, (48, 12)).astype("int32"), rng.integers(0, 10, 48)
    shape = {"residual": (8,), "l2": (6,), "cnn": (8, 8, 2)}[kind]
    x = rng.standard_normal((48,) + shape).astype("float32")
    if kind == "cnn":
        return x, rng.integers(0, 10, 48)
    return x, rng.standard_normal((48, 1)).astype("float32")


MODELS = [("residual", _residual_mlp, True), ("l2", _l2_regression, False),
          ("cnn", _gap_cnn, False), ("text", _text, False)]


def _fit(device, build, x, y):
    with fkeras.device(device):
        fkeras.utils.set_random_seed(5)
        model, loss = build()
        model.compile(optimizer=fkeras.optimizers.SGD(0.05, momentum=0.9), loss=loss)
        device_dispatch.reset_host_op_calls()
        model.fit(x, y, batch_size=16, epochs=2, verbose=0, shuffle=False)
        return model.get_weights(), device_dispatch.host_op_calls()


@pytest.mark.parametrize("kind, build, bit_equal", MODELS, ids=[m[0] for m in MODELS])
def test_models_train_on_device_like_cpu(cuda, kind, build, bit_equal):
    x, y = _data(kind, 7)
    w_dev, host_ops = _fit("cuda", build, x, y)
    assert host_ops == {}
    w_cpu, _ = _fit("cpu", build, x, y)
    for a, b in zip(w_dev, w_cpu):
        if bit_equal:  # elementwise kernels only: the same float32 operations
            np.testing.assert_array_equal(a, b)
        else:  # a float64-accumulated reduction (mean, l2's sum) in the step
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6 * np.abs(b).max())


@pytest.mark.parametrize("seed", range(40))
def test_xp_random_shapes_and_axes(cuda, seed):
    rng = np.random.default_rng(500 + seed)
    shape = tuple(int(d) for d in rng.integers(1, 5, rng.integers(1, 6)))
    other = tuple(1 if rng.random() < 0.4 else d for d in shape[int(rng.integers(0, len(shape))):])
    a, b = _rand(shape, seed), _rand(other, seed + 1)
    np.testing.assert_array_equal(_host(cuda.xp.subtract(cuda.asarray(b), cuda.asarray(a))),
                                  b - a)
    axes = tuple(int(i) - len(shape) if rng.random() < 0.5 else int(i)
                 for i in range(len(shape)) if rng.random() < 0.5) or None
    keepdims = bool(rng.random() < 0.5)
    got = _host(cuda.xp.sum(cuda.asarray(a), axis=axes, keepdims=keepdims))
    ref = np.sum(a.astype(np.float64), axis=axes, keepdims=keepdims)
    assert got.shape == ref.shape
    np.testing.assert_array_equal(got, ref.astype(np.float32))


@pytest.mark.parametrize("name", ["xp_binary", "xp_unary", "xp_where", "xp_reduce",
                                  "xp_copy2d"])
def test_emulation_takes_the_bindings_arguments(name):
    # The emulated kernels stand in for bind_xp.cpp's: same argument names, same order.
    import inspect
    import re

    from fkeras import _native

    real = getattr(_native._C_cuda, name, None) if _native._C_cuda is not None else None
    if real is None:
        pytest.skip("fkeras._C_cuda with the xp family is not built")
    sig = real.__doc__.splitlines()[0]
    real_args = re.findall(r"(?:^|, )(\w+): ", sig[sig.index("(") + 1:sig.rindex(")")])
    fake = getattr(emulated_cuda.make_module(), name)
    assert list(inspect.signature(fake).parameters) == real_args
