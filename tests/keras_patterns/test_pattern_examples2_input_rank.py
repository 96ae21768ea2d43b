"""A Functional/Sequential model called directly on data whose rank differs from its Input's
by one trailing 1 (keras-io's trainer pattern feeds (N, 28, 28) images to Input((28, 28, 1))):
Keras 3 squeezes or expands that axis inside the call; any other rank difference is an error.
Values, gradients and trained weights compared with Keras 3 (torch) and NumPy."""

import numpy as np
import pytest
from patterns_parity import (keras_or_none, losses_trained, no_grad, run_both, seed_weights,
                             tape, to_np)

import fkeras

rng = np.random.RandomState(41)
X = rng.standard_normal((12, 5)).astype("float32")
Y = rng.randint(0, 3, (12,)).astype("int32")


def functional(lib, input_shape):
    inputs = lib.Input(input_shape)
    x = lib.layers.Flatten()(inputs)
    outputs = lib.layers.Dense(3, activation="tanh")(x)
    return lib.Model(inputs, outputs)


def sequential(lib, input_shape):
    return lib.Sequential([lib.Input(input_shape), lib.layers.Flatten(), lib.layers.Dense(3)])


BUILDERS = {"functional": functional, "sequential": sequential}
CASES = {"expand": ((5, 1), X), "squeeze": ((5,), X[..., None])}


@pytest.mark.parametrize("build", sorted(BUILDERS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_direct_call_fits_a_trailing_one(build, case):
    input_shape, x = CASES[case]
    model = BUILDERS[build](fkeras, input_shape)
    w = seed_weights(model, seed=3)
    want = X.astype(np.float64) @ w[0] + w[1]
    if build == "functional":
        want = np.tanh(want)
    for _ in range(3):  # the second and third calls may take the eager fast path
        np.testing.assert_allclose(to_np(model(x)), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_np(model(np.reshape(X, (12,) + input_shape))), want,
                               rtol=1e-5, atol=1e-6)
    keras = keras_or_none()
    if keras is not None:
        kmodel = BUILDERS[build](keras, input_shape)
        kmodel.set_weights(w)
        np.testing.assert_allclose(to_np(kmodel(x)), to_np(model(x)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", sorted(CASES))
def test_gradient_flows_through_the_fitted_axis(case):
    input_shape, x = CASES[case]
    cot = rng.standard_normal((12, 3)).astype("float32")

    def grads(lib):
        model = functional(lib, input_shape)
        seed_weights(model, seed=4)
        xt = lib.ops.convert_to_tensor(x)
        if lib is not fkeras:
            xt.requires_grad_(True)
        with tape(lib) as t:
            if lib is fkeras:
                t.watch(xt)
            loss = lib.ops.sum(model(xt) * lib.ops.convert_to_tensor(cot))
        return {"grads": t.gradient(loss, [xt] + list(model.trainable_variables))}

    fk, _ = run_both(grads)
    assert fk["grads/0"].shape == x.shape


def test_custom_train_step_calls_inner_model_with_fitted_rank():
    def train(lib):
        class Trainer(lib.Model):
            def __init__(self, model):
                super().__init__()
                self.model = model
                self.loss_fn = lib.losses.SparseCategoricalCrossentropy(from_logits=True)

            def train_step(self, data):
                x, y = data
                with tape(lib) as t:
                    loss = self.loss_fn(y, self.model(x, training=True))
                variables = self.trainable_variables
                grads = t.gradient(loss, variables)
                with no_grad(lib):
                    self.optimizer.apply_gradients(zip(grads, variables))
                return {"step_loss": loss}  # not "loss": that is the unused loss tracker

            def call(self, x):
                return self.model(x)

        inner = sequential(lib, (5, 1))
        seed_weights(inner, seed=6)
        trainer = Trainer(inner)
        trainer.compile(optimizer=lib.optimizers.SGD(0.1))
        history = trainer.fit(X, Y, batch_size=4, epochs=3, shuffle=False, verbose=0)
        losses_trained(history.history["step_loss"])
        return {"loss": history.history["step_loss"], "weights": inner.get_weights()}

    run_both(train)


@pytest.mark.parametrize("x_shape", [(12, 5, 2), (12,), (12, 5, 1, 2)],
                         ids=["trailing_two", "rank_minus_two", "rank_plus_one_not_one"])
def test_other_rank_differences_still_raise(x_shape):
    model = functional(fkeras, (5, 1))
    with pytest.raises(ValueError, match="input_layer"):
        model(np.zeros(x_shape, "float32"))
