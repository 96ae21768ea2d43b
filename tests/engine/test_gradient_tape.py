"""fkeras.GradientTape with the tf.GradientTape surface the Keras guides use: watch, gradient on
nested structures of sources, several targets, output_gradients, persistent tapes,
stop_recording, nested tapes, unconnected_gradients, jacobian, watch_accessed_variables."""

import numpy as np
import pytest

import fkeras
from fkeras import ops
from fkeras.engine.tensor import Tensor, array_mode
from fkeras.utils import nest

T = ops.convert_to_tensor


def _x():
    return T(np.array([1.0, 2.0, 3.0]))


def test_watch_tensor_and_variable():
    x, v = _x(), fkeras.Variable(np.array([0.5, -1.0, 2.0]), trainable=False)
    with fkeras.GradientTape() as tape:
        tape.watch(x)
        tape.watch(v)
        y = ops.sum(x * x * v)
    gx, gv = tape.gradient(y, [x, v])
    assert type(gx) is Tensor and type(gv) is Tensor
    np.testing.assert_allclose(gx, 2 * np.array([1.0, 2.0, 3.0]) * [0.5, -1.0, 2.0])
    np.testing.assert_allclose(gv, [1.0, 4.0, 9.0])


def test_unwatched_tensor_has_no_gradient():
    x = _x()
    with fkeras.GradientTape() as tape:
        y = ops.sum(x * x)
    assert tape.gradient(y, x) is None


@pytest.mark.parametrize("bad", [np.array([1, 2]), T(np.array([True])), "x"],
                         ids=["int_array", "bool_tensor", "string"])
def test_watch_rejects_non_float_values(bad):
    with fkeras.GradientTape() as tape:
        with pytest.raises(ValueError, match="floating-point"):
            tape.watch(bad)


def test_watch_nested_structure():
    a, b, c = _x(), T(np.array([[2.0]])), T(np.array(4.0))
    with fkeras.GradientTape() as tape:
        tape.watch({"a": a, "rest": [b, (c,)]})
        y = ops.sum(a) * b[0, 0] * c
    ga, gb, gc = tape.gradient(y, [a, b, c])
    np.testing.assert_allclose(ga, [8.0, 8.0, 8.0])
    np.testing.assert_allclose(gb, [[24.0]])
    np.testing.assert_allclose(gc, 12.0)


@pytest.mark.parametrize("make", [
    lambda a, b: [a, b], lambda a, b: (a, b), lambda a, b: {"a": a, "b": b},
    lambda a, b: {"outer": [a, {"inner": (b,)}]}, lambda a, b: a,
], ids=["list", "tuple", "dict", "nested", "single"])
def test_gradient_keeps_the_structure_of_sources(make):
    a = fkeras.Variable(np.array([1.0, 2.0]))
    b = fkeras.Variable(np.array([[3.0]]))
    with fkeras.GradientTape() as tape:
        y = ops.sum(a * a) + ops.sum(b) * 2.0
    sources = make(a, b)
    grads = tape.gradient(y, sources)
    expect = make(np.array([2.0, 4.0]), np.array([[2.0]]))
    assert type(grads) is (Tensor if sources is a else type(sources))
    flat_g, flat_e = nest.flatten(grads), nest.flatten(expect)
    assert len(flat_g) == len(flat_e)
    for g, e in zip(flat_g, flat_e):
        np.testing.assert_allclose(g, e)


def test_several_targets_are_summed():
    x = fkeras.Variable(np.array([1.0, 2.0]))
    with fkeras.GradientTape() as tape:
        y1 = x * 3.0              # non-scalar: its elements are summed
        y2 = ops.sum(x * x)
    np.testing.assert_allclose(tape.gradient([y1, y2], x), 3.0 + 2 * np.array([1.0, 2.0]))
    with fkeras.GradientTape() as tape:
        out = {"a": x * 3.0, "b": (ops.sum(x * x),)}
    np.testing.assert_allclose(tape.gradient(out, x), 3.0 + 2 * np.array([1.0, 2.0]))


def test_output_gradients():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 2))
    cot = rng.standard_normal((4, 2))
    with fkeras.device("reference"):
        x = T(rng.standard_normal((4, 3)))
        w = fkeras.Variable(a)
        with fkeras.GradientTape() as tape:
            y = x @ w
        g = tape.gradient(y, w, output_gradients=cot)
        np.testing.assert_allclose(g, np.asarray(x).T @ cot, rtol=1e-12)
        with fkeras.GradientTape(persistent=True) as tape:
            y1, y2 = x @ w, ops.sum(w)
        g = tape.gradient([y1, y2], w, output_gradients=[T(cot), None])  # None: ones
        np.testing.assert_allclose(g, np.asarray(x).T @ cot + 1.0, rtol=1e-12)
        with pytest.raises(ValueError, match="output_gradients"):
            tape.gradient([y1, y2], w, output_gradients=[cot])


def test_persistent_tape_allows_several_gradient_calls():
    x = fkeras.Variable(np.array([1.0, 2.0]))
    with fkeras.GradientTape(persistent=True) as tape:
        y = x * x
        z = y * x
    np.testing.assert_allclose(tape.gradient(y, x), [2.0, 4.0])
    np.testing.assert_allclose(tape.gradient(z, x), [3.0, 12.0])
    np.testing.assert_allclose(tape.gradient(z, y), [1.0, 2.0])  # an intermediate source
    np.testing.assert_allclose(tape.gradient(y, x), [2.0, 4.0])


def test_non_persistent_tape_refuses_a_second_gradient_call():
    x = fkeras.Variable(np.array([1.0, 2.0]))
    with fkeras.GradientTape() as tape:
        y = ops.sum(x * x)
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="non-persistent GradientTape"):
        tape.gradient(y, x)


def test_stop_recording():
    x = fkeras.Variable(np.array([1.0, 2.0]))
    with fkeras.GradientTape() as tape:
        with tape.stop_recording():
            y = x * x                      # a constant to the tape
        z = y * x
    np.testing.assert_allclose(tape.gradient(z, x), [1.0, 4.0])


def test_ops_after_the_with_block_are_not_recorded():
    x = fkeras.Variable(np.array([1.0, 2.0]))
    with fkeras.GradientTape(persistent=True) as tape:
        y = x * 2.0
    z = y * x
    assert tape.gradient(z, x) is None
    np.testing.assert_allclose(tape.gradient(y, x), [2.0, 2.0])


def test_nested_tapes_both_record_first_order():
    x = fkeras.Variable(np.array([1.0, 2.0]))
    with fkeras.GradientTape() as outer:
        with fkeras.GradientTape() as inner:
            y = ops.sum(x ** 3)
        g_inner = inner.gradient(y, x)
    np.testing.assert_allclose(g_inner, 3 * np.array([1.0, 2.0]) ** 2)
    np.testing.assert_allclose(outer.gradient(y, x), 3 * np.array([1.0, 2.0]) ** 2)


def test_side_by_side_tapes_each_record_everything():
    # The GAN pattern: `with GradientTape() as gen_tape, GradientTape() as disc_tape:`.
    g = fkeras.Variable(np.array([1.0, 2.0]))
    d = fkeras.Variable(np.array([3.0, -1.0]))
    with fkeras.GradientTape() as gen_tape, fkeras.GradientTape() as disc_tape:
        fake = g * 2.0
        score = ops.sum(fake * d)
    np.testing.assert_allclose(gen_tape.gradient(score, g), [6.0, -2.0])
    np.testing.assert_allclose(disc_tape.gradient(score, d), [2.0, 4.0])


def test_watching_in_an_inner_tape_does_not_leak_to_the_outer():
    x = _x()
    with fkeras.GradientTape() as outer:
        with fkeras.GradientTape() as inner:
            inner.watch(x)
            y = ops.sum(x * x)
    np.testing.assert_allclose(inner.gradient(y, x), [2.0, 4.0, 6.0])
    assert outer.gradient(y, x) is None


def test_intermediate_source_on_a_non_persistent_tape():
    x = fkeras.Variable(np.array([1.0, 2.0]))
    with fkeras.GradientTape() as tape:
        h = x * 3.0
        y = ops.sum(h * h)
    gh, gx = tape.gradient(y, [h, x])
    np.testing.assert_allclose(gh, 2 * 3.0 * np.array([1.0, 2.0]))
    np.testing.assert_allclose(gx, 18.0 * np.array([1.0, 2.0]))


def test_gradient_of_a_gradient_is_refused():
    """Second order is not supported (backward passes run on raw buffers outside the tape):
    the outer tape raises rather than returning None or a gradient missing that path."""
    x = fkeras.Variable(np.array([1.5, 2.0]))
    with fkeras.GradientTape() as outer:
        with fkeras.GradientTape() as inner:
            y = ops.sum(x ** 3)
        g = inner.gradient(y, x)
    with pytest.raises(ValueError, match="second-order"):
        outer.gradient(g, x)


def test_unconnected_gradients():
    x, z = fkeras.Variable(np.array([1.0, 2.0])), fkeras.Variable(np.zeros((2, 2)))
    with fkeras.GradientTape(persistent=True) as tape:
        y = ops.sum(x * 2.0)
    gx, gz = tape.gradient(y, [x, z])
    assert gz is None
    gx, gz = tape.gradient(y, [x, z], unconnected_gradients="zero")
    np.testing.assert_allclose(gx, [2.0, 2.0])
    assert type(gz) is Tensor and gz.shape == (2, 2)
    np.testing.assert_array_equal(gz, 0.0)
    with pytest.raises(ValueError, match="unconnected_gradients"):
        tape.gradient(y, x, unconnected_gradients="nan")


def test_integer_paths_are_unconnected():
    x = fkeras.Variable(np.array([1.2, 2.7]))
    with fkeras.GradientTape() as tape:
        k = ops.cast(x, "int32")                 # no gradient through an integer cast
        y = ops.sum(ops.cast(k, "float32") * x)
    np.testing.assert_allclose(tape.gradient(y, x), [1.0, 2.0])


def test_jacobian():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 4))
    with fkeras.device("reference"):
        x = fkeras.Variable(rng.standard_normal(4))
        w = fkeras.Variable(rng.standard_normal((2, 4)))
        with fkeras.GradientTape(persistent=True) as tape:
            y = T(a) @ (x * x)                   # (3,)
            z = w * x                            # (2, 4)
        j = tape.jacobian(y, x)
        np.testing.assert_allclose(j, a * 2 * x.numpy(), rtol=1e-12)
        jw, jx = tape.jacobian(z, [w, x])
        assert jw.shape == (2, 4, 2, 4) and jx.shape == (2, 4, 4)
        expect_jw = np.zeros((2, 4, 2, 4))
        expect_jx = np.zeros((2, 4, 4))
        for i in range(2):
            for k in range(4):
                expect_jw[i, k, i, k] = x.numpy()[k]
                expect_jx[i, k, k] = w.numpy()[i, k]
        np.testing.assert_allclose(jw, expect_jw)
        np.testing.assert_allclose(jx, expect_jx)
        assert tape.jacobian(y, {"w": w})["w"] is None
        np.testing.assert_array_equal(
            tape.jacobian(y, w, unconnected_gradients="zero"), np.zeros((3, 2, 4)))


def test_jacobian_on_a_non_persistent_tape_runs_once():
    x = fkeras.Variable(np.array([1.0, 2.0]))
    with fkeras.GradientTape() as tape:
        y = x * x
    np.testing.assert_allclose(tape.jacobian(y, x), np.diag([2.0, 4.0]))
    with pytest.raises(RuntimeError, match="non-persistent"):
        tape.gradient(y, x)


def test_watch_accessed_variables_false():
    v, w = fkeras.Variable(np.array([1.0, 2.0])), fkeras.Variable(np.array([3.0]))
    with fkeras.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(w)
        y = ops.sum(v * 2.0) * w[0]
    gv, gw = tape.gradient(y, [v, w])
    assert gv is None
    np.testing.assert_allclose(gw, [6.0])


def test_reset_forgets_the_recording():
    x = fkeras.Variable(np.array([1.0]))
    with fkeras.GradientTape() as tape:
        y = x * 5.0
        tape.reset()
        z = x * 2.0
    assert tape.gradient(y, x) is None
    with fkeras.GradientTape() as tape:
        y = x * 5.0
        tape.reset()
        z = x * 2.0
    np.testing.assert_allclose(tape.gradient(z, x), [2.0])


def test_gradient_in_array_mode_gives_buffers():
    x = fkeras.Variable(np.array([1.0, 2.0], np.float32))
    with array_mode():
        with fkeras.GradientTape() as tape:
            y = ops.sum(ops.multiply(x, x))
        g = tape.gradient(y, x)
    assert type(g) is np.ndarray
    np.testing.assert_allclose(g, [2.0, 4.0])


def test_gradient_of_a_non_tensor_target_raises():
    x = fkeras.Variable(np.array([1.0]))
    with fkeras.GradientTape() as tape:
        ops.sum(x)
    with pytest.raises(ValueError, match="target must be a tensor"):
        tape.gradient(1.0, x)


def test_training_loop_from_scratch_matches_closed_form():
    # The "training loop from scratch" pattern: linear regression by plain gradient descent,
    # checked against the same updates computed by hand in NumPy.
    rng = np.random.default_rng(2)
    x = rng.standard_normal((16, 3)).astype(np.float32)
    y = x @ np.array([[2.0], [-1.0], [0.5]], np.float32) + 1.0
    w = fkeras.Variable(np.zeros((3, 1), np.float32))
    b = fkeras.Variable(np.zeros((1,), np.float32))
    wn, bn = np.zeros((3, 1)), np.zeros(1)
    for _ in range(5):
        with fkeras.GradientTape() as tape:
            loss = ops.mean((x @ w + b - y) ** 2)
        gw, gb = tape.gradient(loss, [w, b])
        w.assign_sub(0.1 * gw)
        b.assign_sub(0.1 * gb)
        r = x @ wn + bn - y
        wn -= 0.1 * (2 * x.T @ r / r.size)
        bn -= 0.1 * (2 * r.sum(0) / r.size)
    np.testing.assert_allclose(w.numpy(), wn, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b.numpy(), bn, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("layer_cls", [fkeras.layers.LSTM, fkeras.layers.GRU,
                                       fkeras.layers.SimpleRNN])
def test_recurrent_ops_take_missing_cotangents_without_zero_fill(layer_cls, monkeypatch):
    """The recurrent ops take None for outputs that got no gradient (the unused sequence when
    return_sequences=False): the tape fills nothing, and the gradients equal those computed
    from explicit zero cotangents on every output."""
    from fkeras.engine import tape as tape_mod

    rng = np.random.default_rng(0)
    layer = layer_cls(5)
    x = T(rng.standard_normal((3, 4, 2)).astype(np.float32))
    layer(x)
    fills = []
    real_fill = tape_mod._zero_fill
    monkeypatch.setattr(tape_mod, "_zero_fill", lambda o, f: fills.append(o) or real_fill(o, f))
    w = T(rng.standard_normal((3, 5)).astype(np.float32))
    with fkeras.GradientTape() as tape:
        tape.watch(x)
        loss = ops.sum(layer(x) * w)
    got = tape.gradient(loss, [x] + layer.trainable_weights)
    assert fills == []
    # The same gradients through return_sequences=True, with the sequence's cotangent zero
    # except at the last step (the final state is the last step's output).
    seq = layer_cls(5, return_sequences=True)
    seq(x)
    seq.set_weights(layer.get_weights())
    wseq = np.zeros((3, 4, 5), np.float32)
    wseq[:, -1] = np.asarray(w)
    with fkeras.GradientTape() as tape:
        tape.watch(x)
        loss = ops.sum(seq(x) * T(wseq))
    want = tape.gradient(loss, [x] + seq.trainable_weights)
    for g, r in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(r), rtol=1e-5, atol=1e-6)
