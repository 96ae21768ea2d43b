"""Model subclasses that override train_step / test_step / predict_step (the "customizing what
happens in fit" guide, with a GradientTape in place of torch autograd), loss trackers that are
Mean metrics listed in `metrics`, `self.optimizer.apply` and `apply_gradients`, and a
compute_loss override, each trained against Keras 3 from the same weights and data."""

import numpy as np
import pytest
from patterns_parity import losses_trained, no_grad, regression_data, run_both, seed_weights, tape

import fkeras


def tracker_model(lib, update="apply"):
    class TrackerModel(lib.Model):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.loss_tracker = lib.metrics.Mean(name="loss")
            self.mae_metric = lib.metrics.MeanAbsoluteError(name="mae")
            self.loss_fn = lib.losses.MeanSquaredError()

        def train_step(self, data):
            x, y = data
            with tape(lib) as t:
                y_pred = self(x, training=True)
                loss = self.loss_fn(y, y_pred)
            grads = t.gradient(loss, self.trainable_weights)
            with no_grad(lib):
                if update == "apply":
                    self.optimizer.apply(grads, self.trainable_weights)
                else:
                    self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
            self.loss_tracker.update_state(loss)
            self.mae_metric.update_state(y, y_pred)
            return {"loss": self.loss_tracker.result(), "mae": self.mae_metric.result()}

        def test_step(self, data):
            x, y = data
            y_pred = self(x, training=False)
            self.loss_tracker.update_state(self.loss_fn(y, y_pred))
            self.mae_metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

        def predict_step(self, data):
            x = data[0] if isinstance(data, tuple) else data
            return self(x, training=False) * 2.0

        @property
        def metrics(self):
            return [self.loss_tracker, self.mae_metric]

    return TrackerModel


@pytest.mark.parametrize("update", ["apply", "apply_gradients"])
def test_train_step_with_loss_trackers_like_keras(update):
    x, y = regression_data(n=48, d_in=4, d_out=1, seed=11)

    def train(lib):
        inp = lib.Input((4,))
        out = lib.layers.Dense(1)(lib.layers.Dense(8, activation="relu")(inp))
        model = tracker_model(lib, update)(inp, out)
        seed_weights(model, seed=3)
        model.compile(optimizer=lib.optimizers.Adam(0.01))
        hist = model.fit(x, y, batch_size=16, epochs=4, shuffle=False, verbose=0)
        evaluated = model.evaluate(x, y, batch_size=16, verbose=0, return_dict=True)
        return {"history": hist.history, "weights": model.get_weights(), "eval": evaluated,
                "predict": model.predict(x[:5], verbose=0)}

    fk, _ = run_both(train)
    losses_trained(fk["history/loss"])
    # the trackers are reset at each epoch: the last mae is one epoch's mean, not a running one
    assert set(k.split("/")[1] for k in fk if k.startswith("history/")) == {"loss", "mae"}


def test_predict_step_override_is_used():
    inp = fkeras.Input((2,))
    model = tracker_model(fkeras)(inp, fkeras.layers.Dense(1, kernel_initializer="ones")(inp))
    x = np.array([[1.0, 2.0], [3.0, 4.0]], "float32")
    np.testing.assert_allclose(model.predict(x, verbose=0), [[6.0], [14.0]])


def test_train_step_with_compute_loss_and_compiled_metrics_like_keras():
    """The guide's first example: compute_loss wraps the compiled loss; sample weights ride
    along as the third element of `data`."""
    x, y = regression_data(n=48, d_in=4, d_out=1, seed=12)
    sw = np.random.RandomState(0).uniform(0.5, 1.5, size=(48,)).astype("float32")

    def train(lib):
        class CustomModel(lib.Model):
            def train_step(self, data):
                x, y, sample_weight = data
                with tape(lib) as t:
                    y_pred = self(x, training=True)
                    loss = self.compute_loss(x=x, y=y, y_pred=y_pred,
                                             sample_weight=sample_weight)
                grads = t.gradient(loss, self.trainable_weights)
                with no_grad(lib):
                    self.optimizer.apply(grads, self.trainable_weights)
                self.tracker.update_state(loss)
                return {"custom_loss": self.tracker.result()}

            @property
            def metrics(self):
                return [self.tracker]

        inp = lib.Input((4,))
        model = CustomModel(inp, lib.layers.Dense(1)(inp))
        model.tracker = lib.metrics.Mean(name="custom_loss")
        seed_weights(model, seed=6)
        model.compile(optimizer="sgd", loss="mse")
        hist = model.fit(x, y, sample_weight=sw, batch_size=16, epochs=3, shuffle=False,
                         verbose=0)
        return {"loss": hist.history["custom_loss"], "weights": model.get_weights()}

    fk, _ = run_both(train)
    losses_trained(fk["loss"])


def test_compute_loss_override_in_built_in_fit_like_keras():
    """Overriding compute_loss (Keras 3) changes what the built-in train step minimises."""
    x, y = regression_data(n=32, d_in=3, d_out=2, seed=13)

    def train(lib):
        class PenalisedModel(lib.Model):
            def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None,
                             training=True):
                loss = super().compute_loss(x=x, y=y, y_pred=y_pred,
                                            sample_weight=sample_weight, training=training)
                return loss + 0.1 * lib.ops.mean(lib.ops.square(y_pred))

        inp = lib.Input((3,))
        model = PenalisedModel(inp, lib.layers.Dense(2)(inp))
        seed_weights(model, seed=7)
        model.compile(optimizer=lib.optimizers.SGD(0.05), loss="mse", metrics=["mae"])
        hist = model.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
        return {"history": hist.history, "weights": model.get_weights(),
                "eval": model.evaluate(x, y, batch_size=8, verbose=0, return_dict=True)}

    fk, _ = run_both(train)
    losses_trained(fk["history/loss"])


def test_gan_style_two_optimizers_like_keras():
    """Two sub-models, two optimizers, two tapes in one train_step (the guide's GAN, shrunk;
    the generator's noise is an input so both libraries see the same values)."""
    rng = np.random.RandomState(14)
    real = rng.standard_normal((32, 4)).astype("float32") + 2.0
    noise = rng.standard_normal((32, 3)).astype("float32")

    def train(lib):
        class GAN(lib.Model):
            def __init__(self, disc, gen):
                super().__init__()
                self.disc, self.gen = disc, gen
                self.d_tracker = lib.metrics.Mean(name="d_loss")
                self.g_tracker = lib.metrics.Mean(name="g_loss")

            @property
            def metrics(self):
                return [self.d_tracker, self.g_tracker]

            def compile(self, d_opt, g_opt, loss_fn):
                super().compile()
                self.d_opt, self.g_opt, self.loss_fn = d_opt, g_opt, loss_fn

            def call(self, z, training=None):
                return self.gen(z)

            def train_step(self, data):
                z, real_x = data
                n = real_x.shape[0]
                labels = lib.ops.concatenate(
                    [lib.ops.convert_to_tensor(np.ones((n, 1), "float32")),
                     lib.ops.convert_to_tensor(np.zeros((n, 1), "float32"))], axis=0)
                fake = self.gen(z)
                with tape(lib) as t:
                    pred = self.disc(lib.ops.concatenate([fake, real_x], axis=0))
                    d_loss = self.loss_fn(labels, pred)
                grads = t.gradient(d_loss, self.disc.trainable_weights)
                with no_grad(lib):
                    self.d_opt.apply(grads, self.disc.trainable_weights)
                with tape(lib) as t:
                    pred = self.disc(self.gen(z))
                    g_loss = self.loss_fn(lib.ops.convert_to_tensor(np.zeros((n, 1), "float32")),
                                          pred)
                grads = t.gradient(g_loss, self.gen.trainable_weights)
                with no_grad(lib):
                    self.g_opt.apply(grads, self.gen.trainable_weights)
                self.d_tracker.update_state(d_loss)
                self.g_tracker.update_state(g_loss)
                return {"d_loss": self.d_tracker.result(), "g_loss": self.g_tracker.result()}

        disc = lib.Sequential([lib.Input((4,)), lib.layers.Dense(8),
                               lib.layers.LeakyReLU(negative_slope=0.2), lib.layers.Dense(1)])
        gen = lib.Sequential([lib.Input((3,)), lib.layers.Dense(8, activation="relu"),
                              lib.layers.Dense(4)])
        seed_weights(disc, seed=8)
        seed_weights(gen, seed=9)
        gan = GAN(disc, gen)
        gan.compile(lib.optimizers.Adam(3e-3), lib.optimizers.Adam(3e-3),
                    lib.losses.BinaryCrossentropy(from_logits=True))
        hist = gan.fit(noise, real, batch_size=16, epochs=3, shuffle=False, verbose=0)
        return {"history": hist.history, "disc": disc.get_weights(), "gen": gen.get_weights()}

    run_both(train)
