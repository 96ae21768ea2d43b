"""fkeras.remat: one tape entry per call, the function recomputed in the backward pass, values
and gradients equal to the plain run (random cotangents, finite differences in float64),
nested structures, kwargs, captured tensors, dropout masks and variable assignments replayed,
tensor mode (user code) and array mode (fkeras's layers, the built-in step)."""

import tracemalloc

import numpy as np
import pytest

import fkeras
from fkeras import layers, ops
from fkeras.engine import remat as remat_module

T = ops.convert_to_tensor


class Counting:
    """Wraps a callable, counting calls."""

    def __init__(self, fn):
        self.fn, self.calls = fn, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.fn(*args, **kwargs)


def _leaves(x):
    return fkeras.utils.nest.flatten(x) if isinstance(x, (list, tuple, dict)) else [x]


def _run(fn, args, kwargs, sources, rng):
    """(outputs, gradients for random cotangents, tape entry count) of fn under a tape."""
    with fkeras.GradientTape() as tape:
        for s in sources:
            if not isinstance(s, fkeras.Variable):
                tape.watch(s)
        out = fn(*args, **kwargs)
    entries = len(tape._entries)
    outs = [o for o in _leaves(out) if np.asarray(o).dtype.kind == "f"]
    cots = [rng.standard_normal(np.shape(o)) for o in outs]
    grads = tape.gradient(outs, sources, output_gradients=cots)
    return [np.asarray(o) for o in _leaves(out)], [None if g is None else np.asarray(g)
                                                  for g in grads], entries


def _case_dense_stack():
    d1, d2 = layers.Dense(5, activation="tanh"), layers.Dense(3, activation="gelu")
    x = T(np.random.default_rng(1).standard_normal((4, 6)))
    d2(d1(x))
    return (lambda x: d2(d1(x))), (x,), {}, [x] + d1.weights + d2.weights


def _case_nested_io():
    rng = np.random.default_rng(2)
    w = fkeras.Variable(rng.standard_normal((3, 3)), name="w")
    a, b, c = (T(rng.standard_normal((2, 3))) for _ in range(3))

    def f(pair, extra, scale=1.0):
        h = ops.tanh(pair[0] @ w) * pair[1]
        return {"h": h * scale, "rest": [ops.sin(extra["c"]), (ops.exp(h),)],
                "count": ops.convert_to_tensor(np.array([1, 2]))}

    return f, ((a, b), {"c": c}), {"scale": 2.5}, [a, b, c, w]


def _case_captured_tensor():
    rng = np.random.default_rng(3)
    x, k = T(rng.standard_normal((3, 4))), T(rng.standard_normal((4,)))
    return (lambda x: ops.sigmoid(x * k) + k), (x,), {}, [x, k]


def _case_identity_and_repeat():
    x = T(np.random.default_rng(4).standard_normal((2, 2)))
    return (lambda x, y: (x, ops.exp(x * y))), (x, x), {}, [x]


def _case_user_layer_kwargs():
    class Gate(layers.Layer):
        def build(self, shape):
            self.g = self.add_weight(shape=(shape[-1],), initializer="ones", name="g")

        def call(self, x, training=None, shift=0.0):
            y = x * self.g + shift
            return ops.relu(y) if training else y

    layer = Gate()
    x = T(np.random.default_rng(5).standard_normal((3, 4)))
    layer(x)
    return layer, (x,), {"training": True, "shift": 0.25}, [x] + layer.weights


def _case_layer_object():
    conv = layers.Conv1D(3, 2, activation="swish")
    x = T(np.random.default_rng(6).standard_normal((2, 5, 4)))
    conv(x)
    return conv, (x,), {}, [x] + conv.weights


CASES = {"dense_stack": _case_dense_stack, "layer_object": _case_layer_object,
         "nested_io": _case_nested_io,
         "captured_tensor": _case_captured_tensor,
         "identity_and_repeated_input": _case_identity_and_repeat,
         "user_layer_kwargs": _case_user_layer_kwargs}


@pytest.mark.parametrize("case", list(CASES))
def test_values_and_gradients_equal_the_plain_run(case):
    fn, args, kwargs, sources = CASES[case]()
    counted = Counting(fn)
    plain = _run(fn, args, kwargs, sources, np.random.default_rng(7))
    rem = _run(fkeras.remat(counted), args, kwargs, sources, np.random.default_rng(7))
    assert rem[2] == 1 and plain[2] > 1  # one tape entry for the whole call
    assert counted.calls == 2  # the forward and the recomputation
    for a, b in zip(plain[0], rem[0]):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(plain[1], rem[1]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6)


def test_gradients_match_finite_differences_float64():
    rng = np.random.default_rng(0)
    with fkeras.device("reference"):
        w = fkeras.Variable(rng.standard_normal((3, 2)))
        x = T(rng.standard_normal((4, 3)))
        cot = rng.standard_normal((4, 2))

        def f(x):
            return ops.tanh(x @ w) * ops.sin(x[:, :2])

        g = fkeras.remat(f)
        with fkeras.GradientTape() as tape:
            tape.watch(x)
            y = g(x)
        gx, gw = tape.gradient(y, [x, w], output_gradients=cot)

        def objective():
            return float(np.sum(np.asarray(f(x)) * cot))

        for src, grad in ((x, gx), (w, gw)):
            buf = src._value
            num = np.zeros_like(buf)
            for i in np.ndindex(buf.shape):
                keep = buf[i]
                buf[i] = keep + 1e-6
                up = objective()
                buf[i] = keep - 1e-6
                down = objective()
                buf[i] = keep
                num[i] = (up - down) / 2e-6
            np.testing.assert_allclose(np.asarray(grad), num, rtol=1e-6, atol=1e-8)


def test_outside_a_tape_and_on_keras_tensors_f_is_called_plainly():
    counted = Counting(lambda x: x * 2.0)
    g = fkeras.remat(counted)
    np.testing.assert_array_equal(g(T(np.ones(2))), [2.0, 2.0])
    sym = g(fkeras.Input((3,)))
    assert isinstance(sym, fkeras.KerasTensor) and sym.shape == (None, 3)
    assert counted.calls == 2


def _dropout_run(use_remat, seed_generator):
    fkeras.utils.set_random_seed(11)
    drop = layers.Dropout(0.5, seed=3 if seed_generator else None)
    w = fkeras.Variable(np.full((50, 50), 0.1), name="w")

    def f(x):
        return drop(x @ w, training=True) * 3.0

    fn = fkeras.remat(f) if use_remat else f
    x = T(np.random.default_rng(0).standard_normal((8, 50)))
    with fkeras.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    after = fkeras.random.SeedGenerator().next()  # the global stream advanced once per draw
    gx, gw = tape.gradient(y, [x, w], output_gradients=np.ones((8, 50)))
    return np.asarray(y), np.asarray(gx), np.asarray(gw), after


@pytest.mark.parametrize("seed_generator", [True, False], ids=["seeded_layer", "global_rng"])
def test_dropout_recomputation_draws_the_same_mask(seed_generator):
    plain, rem = _dropout_run(False, seed_generator), _dropout_run(True, seed_generator)
    for a, b in zip(plain, rem):
        np.testing.assert_allclose(b, a, rtol=1e-6)
    # the backward saw the forward's mask: d(sum y)/dw is zero exactly where every kept row is
    kept = rem[0] != 0
    assert 0.3 < kept.mean() < 0.7


def test_variable_assignments_inside_f_happen_once():
    def run(use_remat):
        fkeras.utils.set_random_seed(0)
        bn = layers.BatchNormalization(momentum=0.5)
        x = T(np.random.default_rng(0).standard_normal((16, 4)) * 3 + 1)
        bn(x)

        def f(x):
            return bn(x, training=True) ** 2

        fn = fkeras.remat(f) if use_remat else f
        with fkeras.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)
        g = tape.gradient(y, [x] + bn.trainable_weights, output_gradients=np.ones((16, 4)))
        return [np.asarray(v) for v in g] + [bn.moving_mean.numpy(), bn.moving_variance.numpy()]

    for a, b in zip(run(False), run(True)):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7)


def test_nested_remat_recomputes_once_per_level():
    inner = Counting(lambda x: ops.tanh(x) * 2.0)
    rinner = fkeras.remat(inner)
    outer = Counting(lambda x: rinner(x) + ops.sin(x))
    x = T(np.linspace(-1, 1, 6))
    with fkeras.GradientTape() as tape:
        tape.watch(x)
        y = fkeras.remat(outer)(x)
    assert len(tape._entries) == 1
    g = tape.gradient(y, x)
    xs = np.linspace(-1, 1, 6)
    np.testing.assert_allclose(g, 2 * (1 - np.tanh(xs) ** 2) + np.cos(xs), rtol=1e-5)
    # Keras (torch checkpoint) counts the same: one forward, one recomputation each.
    assert (outer.calls, inner.calls) == (2, 2)


def test_unconnected_and_integer_outputs():
    x = T(np.ones(3))
    g = fkeras.remat(lambda x: (ops.argmax(x), x * 2.0))
    with fkeras.GradientTape() as tape:
        tape.watch(x)
        idx, y = g(x)
    assert np.asarray(idx).dtype.kind in "iu"
    np.testing.assert_array_equal(tape.gradient(y, x), [2.0, 2.0, 2.0])
    w = fkeras.Variable(np.ones(2))
    with fkeras.GradientTape() as tape:
        tape.watch(x)
        y = fkeras.remat(lambda x: x * 3.0)(x)
    assert tape.gradient(y, [x, w])[1] is None


def _mlp(width, depth, remat):
    fkeras.utils.set_random_seed(0)
    with fkeras.RematScope(mode="full" if remat else None):
        model = fkeras.Sequential([fkeras.Input((width,))] + [
            layers.Dense(width, activation="relu") for _ in range(depth)] + [layers.Dense(1)])
    return model


class Block(layers.Layer):
    """Four Dense(gelu) layers: with RematScope("full") the block is one checkpoint."""

    def __init__(self, width, **kwargs):
        super().__init__(**kwargs)
        self.denses = [layers.Dense(width, activation="gelu") for _ in range(4)]

    def call(self, x):
        for d in self.denses:
            x = d(x)
        return x


def _peak_step_bytes(mode):
    fkeras.utils.set_random_seed(0)
    x = np.random.default_rng(0).standard_normal((1024, 64)).astype("float32")
    with fkeras.RematScope(mode=mode):
        model = fkeras.Sequential([fkeras.Input((64,))] + [Block(64) for _ in range(3)] +
                                  [layers.Dense(1)])
    tracemalloc.start()
    with fkeras.GradientTape() as tape:
        loss = ops.mean(model(x) ** 2)
    grads = tape.gradient(loss, model.trainable_weights)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak, [np.asarray(g) for g in grads]


def test_training_step_peak_memory_drops():
    """Three blocks of four Dense(gelu) layers, batch 1024: the step's peak of NumPy memory
    (tracemalloc) with each block rematerialized is well below the plain step's (the blocks'
    inner activations are recomputed, one block at a time, instead of kept)."""
    plain, grads_plain = _peak_step_bytes(None)
    rem, grads_rem = _peak_step_bytes("full")
    assert rem < 0.6 * plain, (plain, rem)
    for a, b in zip(grads_plain, grads_rem):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-7)


def test_fit_with_remat_scope_matches_plain_fit_and_recomputes():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 6)).astype("float32")
    y = rng.standard_normal((64, 3)).astype("float32")
    results = {}
    for remat in (False, True):
        fkeras.utils.set_random_seed(1)
        with fkeras.RematScope(mode="full" if remat else None):
            model = fkeras.Sequential([
                fkeras.Input((6,)), layers.Dense(16, activation="relu"), layers.Dropout(0.3),
                layers.BatchNormalization(), layers.Dense(3)])
        first = model.layers[0]
        counted = Counting(first.call)
        first.call = lambda x: counted(x)
        model.compile("adam", "mse")
        fkeras.utils.set_random_seed(2)
        hist = model.fit(x, y, epochs=2, batch_size=16, shuffle=False, verbose=0)
        results[remat] = (model.get_weights(), hist.history["loss"], counted.calls)
    assert results[False][2] == 8 and results[True][2] == 16  # 8 steps, recomputed once each
    np.testing.assert_allclose(results[True][1], results[False][1], rtol=1e-6)
    for a, b in zip(results[False][0], results[True][0]):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_custom_train_loop_tensor_mode():
    results = []
    for remat in (False, True):
        model = _mlp(8, 3, remat)
        opt = fkeras.optimizers.SGD(0.1)
        x = T(np.random.default_rng(0).standard_normal((16, 8)))
        for _ in range(2):
            with fkeras.GradientTape() as tape:
                loss = ops.mean(ops.square(model(x) - 1.0))
            grads = tape.gradient(loss, model.trainable_weights)
            opt.apply_gradients(zip(grads, model.trainable_weights))
        results.append(model.get_weights())
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_recomputing_flag_is_set_only_during_the_backward():
    seen = []

    def f(x):
        seen.append(remat_module.recomputing())
        return x * 2.0

    x = T(np.ones(2))
    with fkeras.GradientTape() as tape:
        tape.watch(x)
        y = fkeras.remat(f)(x)
    tape.gradient(y, x)
    assert seen == [False, True] and not remat_module.recomputing()
