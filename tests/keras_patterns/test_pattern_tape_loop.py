"""Training loops written from scratch (the "writing a training loop" guides, with
`fkeras.GradientTape` where the torch guide uses autograd): optimizer.apply and
apply_gradients, model.losses added to the loss, metrics updated and reset by hand, a
persistent tape, against Keras 3 on the same weights and batches."""

import numpy as np
import pytest
from patterns_parity import classification_data, no_grad, run_both, seed_weights, tape, to_np

import fkeras


def mnist_like_model(lib, with_activity_loss=False):
    class ActivityRegularization(lib.layers.Layer):
        def call(self, inputs):
            self.add_loss(1e-2 * lib.ops.sum(inputs))
            return inputs

    inp = lib.Input((6,), name="digits")
    x = lib.layers.Dense(8, activation="relu")(inp)
    if with_activity_loss:
        x = ActivityRegularization()(x)
    x = lib.layers.Dense(8, activation="relu")(x)
    out = lib.layers.Dense(3, name="predictions")(x)
    return lib.Model(inp, out)


def batches(x, y, size):
    for i in range(0, len(x), size):
        yield x[i:i + size], y[i:i + size]


@pytest.mark.parametrize("update", ["apply", "apply_gradients"])
@pytest.mark.parametrize("with_activity_loss", [False, True])
def test_scratch_loop_like_keras(update, with_activity_loss):
    x, labels = classification_data(n=64, d_in=6, classes=3, seed=31)
    y = np.eye(3, dtype="float32")[labels]

    def train(lib):
        model = mnist_like_model(lib, with_activity_loss)
        seed_weights(model, seed=4)
        optimizer = lib.optimizers.Adam(learning_rate=1e-2)
        loss_fn = lib.losses.CategoricalCrossentropy(from_logits=True)
        acc = lib.metrics.CategoricalAccuracy()
        step_losses, epoch_acc = [], []
        for _ in range(2):
            for xb, yb in batches(x, y, 16):
                with tape(lib) as t:
                    logits = model(xb, training=True)
                    loss = loss_fn(yb, logits)
                    if model.losses:
                        loss = loss + sum(model.losses)
                grads = t.gradient(loss, model.trainable_weights)
                with no_grad(lib):
                    if update == "apply":
                        optimizer.apply(grads, model.trainable_weights)
                    else:
                        optimizer.apply_gradients(zip(grads, model.trainable_weights))
                acc.update_state(yb, logits)
                step_losses.append(float(loss))
            epoch_acc.append(float(acc.result()))
            acc.reset_state()
        return {"losses": step_losses, "acc": epoch_acc, "weights": model.get_weights(),
                "iterations": int(to_np(optimizer.iterations))}

    fk, _ = run_both(train)
    assert fk["losses"][-1] < fk["losses"][0]
    assert fk["iterations"] == 8


def test_vae_style_model_with_kl_add_loss_like_keras():
    """The subclassing guide's VAE loop, with the sampling noise passed in so both libraries
    draw the same values."""
    rng = np.random.RandomState(32)
    data = rng.random_sample((32, 10)).astype("float32")
    eps = rng.standard_normal((32, 2)).astype("float32")

    def train(lib):
        class Encoder(lib.layers.Layer):
            def __init__(self, **kwargs):
                super().__init__(**kwargs)
                self.proj = lib.layers.Dense(6, activation="relu")
                self.mean = lib.layers.Dense(2)
                self.log_var = lib.layers.Dense(2)

            def call(self, inputs):
                x, noise = inputs
                h = self.proj(x)
                z_mean, z_log_var = self.mean(h), self.log_var(h)
                return z_mean, z_log_var, z_mean + lib.ops.exp(0.5 * z_log_var) * noise

        class VAE(lib.Model):
            def __init__(self, **kwargs):
                super().__init__(**kwargs)
                self.encoder = Encoder()
                self.decoder = lib.layers.Dense(10, activation="sigmoid")

            def call(self, inputs, training=None):
                z_mean, z_log_var, z = self.encoder(inputs)
                kl = -0.5 * lib.ops.mean(z_log_var - lib.ops.square(z_mean)
                                         - lib.ops.exp(z_log_var) + 1)
                self.add_loss(kl)
                return self.decoder(z)

        vae = VAE()
        vae((data[:1], eps[:1]))
        seed_weights(vae, seed=5)
        optimizer = lib.optimizers.Adam(1e-2)
        mse = lib.losses.MeanSquaredError()
        tracker = lib.metrics.Mean()
        for i in range(0, 32, 8):
            xb, nb = data[i:i + 8], eps[i:i + 8]
            with tape(lib) as t:
                loss = mse(xb, vae((xb, nb)))
                loss += sum(vae.losses)
            grads = t.gradient(loss, vae.trainable_weights)
            with no_grad(lib):
                optimizer.apply_gradients(zip(grads, vae.trainable_weights))
            tracker(loss)
        return {"mean_loss": tracker.result(), "weights": vae.get_weights()}

    run_both(train)


def test_persistent_tape_two_gradients_like_keras():
    x, labels = classification_data(n=16, d_in=6, classes=3, seed=33)

    def train(lib):
        model = mnist_like_model(lib)
        seed_weights(model, seed=6)
        with tape(lib, persistent=True) as t:
            logits = model(x)
            a = lib.ops.mean(lib.ops.square(logits))
            b = lib.ops.mean(logits * 3.0)
        ga = t.gradient(a, model.trainable_weights)
        gb = t.gradient(b, model.trainable_weights)
        return {"ga": ga, "gb": gb}

    run_both(train)


def test_gradient_of_an_unused_variable_is_none():
    used = fkeras.Variable(np.ones(3, "float32"))
    unused = fkeras.Variable(np.ones(3, "float32"))
    with fkeras.GradientTape() as t:
        loss = fkeras.ops.sum(used * 2.0)
    g_used, g_unused = t.gradient(loss, [used, unused])
    np.testing.assert_allclose(to_np(g_used), [2.0, 2.0, 2.0])
    assert g_unused is None
