"""compile/fit/evaluate/predict: learning on the bundled digits, equality with a hand-written
GradientTape loop, Keras's fit arguments, multi-output losses, logs and History."""

import numpy as np
import pytest

import fkeras
from fkeras import layers


def digits():
    (x, y), (xt, yt) = fkeras.datasets.digits.load_data()
    return (x.reshape(-1, 64).astype("float32") / 16.0, y), (xt.reshape(-1, 64) / 16.0, yt)


def mlp(hidden=32, classes=10, activation="softmax", seed=1):
    fkeras.utils.set_random_seed(seed)
    inp = fkeras.Input((64,), name="pixels")
    h = layers.Dense(hidden, activation="relu")(inp)
    out = layers.Dense(classes, activation=activation, name="digit")(h)
    return fkeras.Model(inp, out)


def test_mlp_learns_digits():
    (x, y), (xt, yt) = digits()
    model = mlp()
    model.compile(optimizer=fkeras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    history = model.fit(x, y, epochs=5, batch_size=32, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    loss, acc = model.evaluate(xt, yt, verbose=0)
    assert acc >= 0.90, acc
    probs = model.predict(xt, verbose=0)
    assert probs.shape == (360, 10)
    np.testing.assert_allclose(probs.sum(1), 1.0, rtol=1e-5)
    assert np.isclose((probs.argmax(1) == yt).mean(), acc)


def test_fit_equals_a_hand_written_tape_loop():
    (x, y), _ = digits()
    x, y = x[:96], fkeras.utils.to_categorical(y[:96], 10)
    a, b = mlp(seed=3), mlp(seed=3)
    np.testing.assert_array_equal(a.get_weights()[0], b.get_weights()[0])
    a.compile(optimizer=fkeras.optimizers.SGD(0.1, momentum=0.9),
              loss="categorical_crossentropy")
    a.fit(x, y, batch_size=32, epochs=2, shuffle=False, verbose=0)

    opt = fkeras.optimizers.SGD(0.1, momentum=0.9)
    loss_fn = fkeras.losses.CategoricalCrossentropy()
    for _ in range(2):
        for start in range(0, 96, 32):
            with fkeras.GradientTape() as tape:
                pred = b(x[start:start + 32], training=True)
                loss = loss_fn(y[start:start + 32], pred)
            grads = tape.gradient(loss, b.trainable_weights)
            opt.apply(grads, b.trainable_weights)
    # fit computes the loss from the logits (exact), the loop from clipped probabilities:
    # with no probability near the clip they agree to float32 rounding.
    for wa, wb in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_allclose(wa, wb, rtol=1e-4, atol=1e-5)


def test_logits_are_recovered_for_sigmoid_and_softmax_outputs():
    inp = fkeras.Input((1,))
    out = layers.Dense(1, activation="sigmoid", kernel_initializer="zeros",
                       bias_initializer=fkeras.initializers.Constant(-100.0))(inp)
    model = fkeras.Model(inp, out)
    model.compile(loss="binary_crossentropy")
    x, y = np.zeros((4, 1), "float32"), np.ones((4, 1), "float32")
    assert np.isclose(model.evaluate(x, y, verbose=0), 100.0, rtol=1e-5)  # exact
    clipped = fkeras.losses.binary_crossentropy(y, model.predict(x, verbose=0))
    assert np.allclose(clipped, 16.118, atol=1e-3)  # what Keras 3 jax/torch report
    # The same through a separate Activation layer and softmax + sparse crossentropy.
    inp = fkeras.Input((2,))
    logits = layers.Dense(3, kernel_initializer="zeros",
                          bias_initializer=fkeras.initializers.Constant([0.0, 0.0, 60.0]))(inp)
    model = fkeras.Model(inp, layers.Activation("softmax")(logits))
    model.compile(loss="sparse_categorical_crossentropy")
    loss = model.evaluate(np.zeros((2, 2)), np.array([0, 0]), verbose=0)
    assert np.isclose(loss, 60.0, rtol=1e-5)


def test_fit_arguments_and_history():
    (x, y), _ = digits()
    x, y = x[:200], y[:200]
    model = mlp()
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    hist = model.fit(x, y, batch_size=50, epochs=4, initial_epoch=2, verbose=0,
                     validation_split=0.25)
    assert hist.epoch == [2, 3]
    assert list(hist.history) == ["accuracy", "loss", "val_accuracy", "val_loss"]  # sorted (Keras 3)
    assert hist.params == {"verbose": 0, "epochs": 4, "steps": 3}
    assert model.history is hist and hist.model is model
    # steps_per_epoch limits the batches per epoch.
    seen = []
    cb = fkeras.callbacks.LambdaCallback(on_train_batch_end=lambda b, logs: seen.append(b))
    model.fit(x, y, batch_size=10, steps_per_epoch=3, epochs=2, verbose=0, callbacks=[cb])
    assert seen == [0, 1, 2, 0, 1, 2]


def test_validation_split_is_the_last_fraction_before_shuffling():
    (x, y), _ = digits()
    x, y = x[:100], y[:100]
    model = mlp()
    model.compile("sgd", "sparse_categorical_crossentropy")
    hist = model.fit(x, y, epochs=1, validation_split=0.2, shuffle=True, verbose=0)
    val = model.evaluate(x[80:], y[80:], verbose=0)
    assert np.isclose(hist.history["val_loss"][0], val, rtol=1e-6)
    with pytest.raises(ValueError, match="not sufficient to split"):
        model.fit(x[:1], y[:1], validation_split=0.1, verbose=0)


def test_sample_and_class_weights():
    (x, y), _ = digits()
    x, y = x[:64], y[:64]
    model = mlp()
    model.compile("sgd", "sparse_categorical_crossentropy")
    base = model.evaluate(x, y, batch_size=64, verbose=0)
    w = np.where(y == 3, 2.0, 1.0).astype("float32")
    losses = fkeras.losses.sparse_categorical_crossentropy(y, model.predict(x, verbose=0))
    weighted = model.evaluate(x, y, sample_weight=w, batch_size=64, verbose=0)
    assert np.isclose(weighted, float(np.sum(losses * w) / 64), rtol=1e-5)
    assert not np.isclose(weighted, base)
    a, b = mlp(seed=5), mlp(seed=5)
    for m in (a, b):
        m.compile(fkeras.optimizers.SGD(0.1), "sparse_categorical_crossentropy")
    a.fit(x, y, sample_weight=w, epochs=1, batch_size=16, shuffle=False, verbose=0)
    b.fit(x, y, class_weight={3: 2.0}, epochs=1, batch_size=16, shuffle=False, verbose=0)
    for wa, wb in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_allclose(wa, wb, rtol=1e-6)


def test_multi_output_losses_weights_and_names():
    fkeras.utils.set_random_seed(0)
    inp = fkeras.Input((4,), name="x")
    h = layers.Dense(8, activation="relu")(inp)
    out1 = layers.Dense(1, name="out1")(h)
    out2 = layers.Dense(3, activation="softmax", name="out2")(h)
    model = fkeras.Model(inp, [out1, out2])
    model.compile("adam", loss={"out1": "mse", "out2": "sparse_categorical_crossentropy"},
                  loss_weights=[0.5, 2.0], metrics={"out2": ["accuracy"]})
    rng = np.random.default_rng(0)
    x = rng.standard_normal((40, 4)).astype("float32")
    y1, y2 = rng.standard_normal((40, 1)).astype("float32"), rng.integers(0, 3, 40)
    hist = model.fit(x, {"out1": y1, "out2": y2}, epochs=2, batch_size=40, verbose=0)
    assert list(hist.history) == ["loss", "out1_loss", "out2_accuracy", "out2_loss"]  # sorted
    logs = model.evaluate(x, [y1, y2], verbose=0, return_dict=True)
    assert np.isclose(logs["loss"], 0.5 * logs["out1_loss"] + 2.0 * logs["out2_loss"],
                      rtol=1e-5)
    p1, p2 = model.predict(x, verbose=0)
    assert p1.shape == (40, 1) and p2.shape == (40, 3)
    with pytest.raises(ValueError, match="one entry per model output"):
        model.compile("adam", loss=["mse"])
    with pytest.raises(ValueError, match="Unknown entries in loss dictionary"):
        model.compile("adam", loss={"out3": "mse"})


def test_regularizers_add_to_the_loss_and_constraints_apply():
    inp = fkeras.Input((2,))
    out = layers.Dense(1, use_bias=False, kernel_initializer="ones",
                       kernel_regularizer=fkeras.regularizers.L2(1.0))(inp)
    model = fkeras.Model(inp, out)
    model.compile("sgd", "mse")
    # Semantics notes: l2(1.0) on a kernel of ones with zero data: the reported loss is 2.0.
    assert np.isclose(model.evaluate(np.zeros((4, 2)), np.zeros((4, 1)), verbose=0), 2.0)
    inp = fkeras.Input((2,))
    out = layers.Dense(1, kernel_constraint=fkeras.constraints.NonNeg())(inp)
    model = fkeras.Model(inp, out)
    model.compile(fkeras.optimizers.SGD(0.05), "mse")
    model.fit(np.ones((8, 2)), -10 * np.ones((8, 1)), epochs=3, verbose=0)
    assert (model.layers[1].kernel.numpy() >= 0).all()


def test_on_batch_methods():
    (x, y), _ = digits()
    model = mlp()
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    loss, acc = model.train_on_batch(x[:32], y[:32])
    logs = model.test_on_batch(x[:32], y[:32], return_dict=True)
    assert set(logs) == {"loss", "accuracy"}
    # Per batch, not accumulated (Keras 3): right then wrong labels.
    pred = model.predict_on_batch(x[:8]).argmax(1)
    assert model.test_on_batch(x[:8], pred, return_dict=True)["accuracy"] == 1.0
    assert model.test_on_batch(x[:8], (pred + 1) % 10, return_dict=True)["accuracy"] == 0.0
    assert model.predict_on_batch(x[:5]).shape == (5, 10)
    plain = mlp()
    plain.compile("adam", "sparse_categorical_crossentropy")
    assert np.ndim(plain.train_on_batch(x[:16], y[:16])) == 0


def test_iterable_of_batches_and_generators():
    (x, y), _ = digits()
    model = mlp()
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    batches = [(x[i:i + 50], y[i:i + 50]) for i in range(0, 200, 50)]
    hist = model.fit(batches, epochs=2, verbose=0, validation_data=batches[:1])
    assert len(hist.history["loss"]) == 2 and "val_accuracy" in hist.history

    def gen():
        while True:
            for b in batches:
                yield b

    hist = model.fit(gen(), steps_per_epoch=3, epochs=2, verbose=0)
    assert len(hist.epoch) == 2
    assert model.predict((b[0] for b in batches), verbose=0).shape == (200, 10)
    assert np.ndim(model.evaluate(iter(batches), verbose=0)[0]) == 0


def test_subclassed_model_trains():
    class TwoLayer(fkeras.Model):
        def __init__(self):
            super().__init__()
            self.hidden = layers.Dense(16, activation="relu")
            self.out = layers.Dense(1)

        def call(self, inputs, training=False):
            return self.out(self.hidden(inputs))

    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 3)).astype("float32")
    y = x @ np.array([[1.0], [-2.0], [0.5]], "float32")
    fkeras.utils.set_random_seed(0)
    model = TwoLayer()
    model.compile(fkeras.optimizers.Adam(0.01), "mse")
    hist = model.fit(x, y, epochs=20, batch_size=16, verbose=0)
    assert hist.history["loss"][-1] < 0.3 * hist.history["loss"][0]
    assert model.predict(x, verbose=0).shape == (64, 1)


def test_custom_train_step_override():
    calls = []

    class Custom(fkeras.Model):
        def train_step(self, data):
            x, y = data
            calls.append((x.shape, y.shape))
            with fkeras.GradientTape() as tape:
                loss = self.compute_loss(x=x, y=y, y_pred=self(x, training=True))
            self.optimizer.apply(tape.gradient(loss, self.trainable_weights),
                                 self.trainable_weights)
            self._loss_tracker.update_state(loss)
            return self.get_metrics_result()

    inp = fkeras.Input((3,))
    model = Custom(inp, layers.Dense(1)(inp))
    model.compile("sgd", "mse")
    model.fit(np.ones((20, 3)), np.ones((20, 1)), batch_size=10, epochs=1, verbose=0)
    assert calls == [((10, 3), (10, 1)), ((10, 3), (10, 1))]


def test_set_random_seed_makes_fit_repeatable():
    (x, y), _ = digits()

    def run():
        model = mlp(seed=11)
        model.compile("adam", "sparse_categorical_crossentropy")
        model.fit(x[:300], y[:300], epochs=2, batch_size=32, verbose=0)
        return model.get_weights()

    for a, b in zip(run(), run()):
        np.testing.assert_array_equal(a, b)


def test_exception_inside_fit_leaves_the_model_usable():
    (x, y), _ = digits()
    model = mlp()
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])

    def boom(batch, logs):
        if batch == 2:
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        model.fit(x[:200], y[:200], verbose=0,
                  callbacks=[fkeras.callbacks.LambdaCallback(on_train_batch_end=boom)])
    assert fkeras.engine.tape.current_tape() is None
    hist = model.fit(x[:200], y[:200], epochs=1, verbose=0)
    assert np.isfinite(hist.history["loss"][0])
    assert model.predict(x[:3], verbose=0).shape == (3, 10)


def test_changing_trainable_after_compile_rebuilds_the_optimizer():
    (x, y), _ = digits()
    model = mlp()
    model.compile("adam", "sparse_categorical_crossentropy")
    model.fit(x[:64], y[:64], verbose=0)
    frozen = model.layers[1].kernel.numpy()
    model.layers[1].trainable = False
    with pytest.warns(UserWarning, match="trainable variables changed"):
        model.fit(x[:64], y[:64], verbose=0)
    np.testing.assert_array_equal(model.layers[1].kernel.numpy(), frozen)


def test_not_compiled():
    with pytest.raises(ValueError, match="You must call `compile\\(\\)`"):
        mlp().fit(np.zeros((2, 64)), np.zeros(2))


def test_progress_bar_formats(capsys):
    (x, y), _ = digits()
    model = mlp()
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x[:64], y[:64], batch_size=32, epochs=2, verbose=1)
    out = capsys.readouterr().out
    assert "Epoch 1/2" in out and "Epoch 2/2" in out
    assert "\x1b[" not in out and "\b" not in out  # not a terminal: no ANSI, no backspaces
    lines = [ln for ln in out.splitlines() if ln.startswith("2/2")]
    assert len(lines) == 2 and " - loss: " in lines[0] and " - accuracy: " in lines[0]
    assert "/step" in lines[0]
    model.fit(x[:64], y[:64], batch_size=32, epochs=1, verbose=2)
    out = capsys.readouterr().out
    assert "Epoch" not in out  # a single epoch prints no header (Keras 2/3)
    assert out.startswith("2/2 - ") and "/step - accuracy: " in out and " - loss: " in out
    model.fit(x[:64], y[:64], batch_size=32, epochs=1, verbose=0)
    assert capsys.readouterr().out == ""
    model.evaluate(x[:64], y[:64], verbose=1)
    assert capsys.readouterr().out.startswith("2/2 ")


def test_add_loss_without_a_compiled_loss():
    class Penalty(layers.Layer):
        def call(self, inputs):
            self.add_loss(fkeras.ops.mean(fkeras.ops.square(inputs)))
            return inputs

    fkeras.utils.set_random_seed(0)
    inp = fkeras.Input((3,))
    out = Penalty()(layers.Dense(2)(inp))
    model = fkeras.Model(inp, out)
    model.compile(fkeras.optimizers.SGD(0.1))
    x = np.ones((16, 3), "float32")
    before = len(model.layers[-1]._losses)
    hist = model.fit(x, epochs=5, verbose=0)
    assert hist.history["loss"][-1] < 0.5 * hist.history["loss"][0]
    assert len(model.layers[-1]._losses) <= before  # consumed by each step, not accumulated
    plain = fkeras.Model(inp, layers.Dense(1)(inp))
    plain.compile("sgd")
    with pytest.raises(ValueError, match="No loss to compute"):
        plain.fit(x, verbose=0)


def test_progbar_on_a_terminal(monkeypatch):
    import io

    monkeypatch.setenv("FKERAS_PROGBAR_DYNAMIC", "1")
    buf = io.StringIO()
    bar = fkeras.utils.Progbar(target=3, stream=buf, interval=0.0)
    bar.update(1, [("loss", 0.5)])
    bar.update(3, [("loss", 0.25), ("tiny", 1e-4)])
    out = buf.getvalue()
    assert out.startswith("\r\x1b[1m1/3\x1b[0m \x1b[32m" + "━" * 6 + "\x1b[0m\x1b[37m" + "━" * 14)
    assert "\r\x1b[1m3/3\x1b[0m" in out and out.endswith("- loss: 0.2500 - tiny: 1.0000e-04\n")
    monkeypatch.setenv("FKERAS_PROGBAR_DYNAMIC", "0")
    buf = io.StringIO()
    bar = fkeras.utils.Progbar(target=3, stream=buf, verbose=2)
    bar.update(3, [("loss", 0.25)])
    assert buf.getvalue().startswith("3/3 - ") and buf.getvalue().endswith(" - loss: 0.2500\n")
