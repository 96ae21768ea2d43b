"""Tape patterns of the Keras-for-researchers guide: the gradient of a non-scalar target (its
sum is differentiated), a tape opened inside another, and what fkeras refuses loudly: a
gradient of a gradient (nested tapes, the gradient-penalty shape), and Keras 2's
`model.add_loss(symbolic_tensor)` on a functional model."""

import numpy as np
import pytest
from patterns_parity import keras_or_none, run_both, tape, to_np

import fkeras
from fkeras import ops

A = np.array([[0.5, -1.2], [2.0, 0.3]], dtype="float32")
B = np.array([[1.5, 0.7], [-0.4, 1.1]], dtype="float32")


def test_gradient_of_a_non_scalar_target_differentiates_its_sum():
    a = fkeras.Variable(A)
    with fkeras.GradientTape() as t:
        c = ops.sqrt(ops.square(a) + ops.square(B))
    g = t.gradient(c, a)
    a64, b64 = A.astype("float64"), B.astype("float64")
    np.testing.assert_allclose(to_np(g), a64 / np.sqrt(a64**2 + b64**2), rtol=1e-6)


def test_a_tape_inside_another_gives_first_order_gradients():
    def train(lib):
        a = lib.Variable(A)
        with tape(lib, persistent=True) as outer:
            with tape(lib) as inner:
                c = lib.ops.sum(lib.ops.sqrt(lib.ops.square(a) + lib.ops.square(B)))
            g_inner = inner.gradient(c, [a])[0]
            d = lib.ops.sum(lib.ops.stop_gradient(g_inner) * a) + lib.ops.sum(a * a)
        return {"inner": g_inner, "outer": outer.gradient(d, [a])[0]}

    fk, _ = run_both(train)
    np.testing.assert_allclose(fk["outer"], fk["inner"] + 2 * A, rtol=1e-6)


@pytest.mark.parametrize("penalty", ["direct", "through_ops", "in_a_sum"])
def test_a_gradient_of_a_gradient_raises(penalty):
    model = fkeras.Sequential([fkeras.Input((2,)), fkeras.layers.Dense(1)])
    x = fkeras.Variable(A)
    with fkeras.GradientTape() as outer:
        with fkeras.GradientTape() as inner:
            y = ops.sum(model(x))
        g = inner.gradient(y, x)
        if penalty == "direct":
            target = g
        elif penalty == "through_ops":
            target = ops.mean(ops.square(ops.sqrt(ops.sum(ops.square(g), axis=1)) - 1.0))
        else:
            target = ops.mean(model(x)) + 10.0 * ops.mean(ops.square(g))
    with pytest.raises(ValueError, match="second-order gradients are not supported"):
        outer.gradient(target, model.trainable_weights)


def test_a_reset_outer_tape_forgets_inner_gradients():
    x = fkeras.Variable(A)
    with fkeras.GradientTape(persistent=True) as outer:
        with fkeras.GradientTape() as inner:
            y = ops.sum(x * x)
        g = inner.gradient(y, x)
        outer.reset()
        z = ops.sum(g * x)
    np.testing.assert_allclose(to_np(outer.gradient(z, x)), 2 * A, rtol=1e-6)


def test_symbolic_add_loss_on_a_functional_model_is_refused():
    inputs = fkeras.Input((4,))
    hidden = fkeras.layers.Dense(3)(inputs)
    model = fkeras.Model(inputs, fkeras.layers.Dense(4)(hidden))
    with pytest.raises(NotImplementedError, match="add_loss"):
        model.add_loss(ops.mean(ops.square(hidden)))
    keras = keras_or_none()
    if keras is not None:  # Keras 3 refuses it too
        k_in = keras.Input((4,))
        k_hidden = keras.layers.Dense(3)(k_in)
        k_model = keras.Model(k_in, keras.layers.Dense(4)(k_hidden))
        with pytest.raises(NotImplementedError):
            k_model.add_loss(keras.ops.mean(keras.ops.square(k_hidden)))
