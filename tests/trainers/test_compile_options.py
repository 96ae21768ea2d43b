"""compile's steps_per_execution / jit_compile / auto_scale_loss / run_eagerly, and optimizers'
gradient_accumulation_steps (Keras 3 semantics), checked against real Keras 3 when installed."""

import importlib.util
import os
import warnings

import numpy as np
import pytest

import fkeras
from fkeras import callbacks, layers


def small_model(seed=0):
    fkeras.utils.set_random_seed(seed)
    inp = fkeras.Input((4,))
    return fkeras.Model(inp, layers.Dense(2)(layers.Dense(5, activation="tanh")(inp)))


def test_compile_accepts_keras_arguments():
    model = small_model()
    model.compile("sgd", "mse", steps_per_execution=4, jit_compile=True, auto_scale_loss=False)
    assert model.steps_per_execution == 4 and model.jit_compile is True
    model.compile("sgd", "mse", jit_compile="auto")
    assert model.jit_compile is False and model.steps_per_execution == 1
    with pytest.warns(UserWarning, match="cannot also be True"):
        model.compile("sgd", "mse", run_eagerly=True, jit_compile=True)
    assert model.run_eagerly is True and model.jit_compile is False
    with pytest.raises(ValueError, match="steps_per_execution"):
        model.compile("sgd", "mse", steps_per_execution=0)
    with pytest.raises(ValueError, match="jit_compile"):
        model.compile("sgd", "mse", jit_compile="xla")


def test_steps_per_execution_groups_batch_callbacks_and_trains_the_same():
    x = np.random.default_rng(0).standard_normal((40, 4)).astype("float32")
    y = np.ones((40, 2), "float32")
    events = []
    recorder = callbacks.LambdaCallback(
        on_train_batch_begin=lambda b, logs: events.append(("begin", b)),
        on_train_batch_end=lambda b, logs: events.append(("end", b)))
    grouped, plain = small_model(), small_model()
    grouped.compile(fkeras.optimizers.SGD(0.1), "mse", steps_per_execution=2)
    plain.compile(fkeras.optimizers.SGD(0.1), "mse")
    hg = grouped.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0,
                     callbacks=[recorder])
    hp = plain.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    # 5 batches per epoch: executions (0, 1), (2, 3), (4, 5) as Keras's EpochIterator reports.
    assert events == [("begin", 0), ("end", 1), ("begin", 2), ("end", 3), ("begin", 4),
                      ("end", 5)] * 2
    assert hg.history == hp.history
    for a, b in zip(grouped.get_weights(), plain.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_gradient_accumulation_applies_the_mean_every_n_calls():
    with pytest.raises(ValueError, match="must be an integer >= 2"):
        fkeras.optimizers.SGD(gradient_accumulation_steps=1)
    var = fkeras.Variable(np.zeros(3, "float32"))
    opt = fkeras.optimizers.SGD(0.5, gradient_accumulation_steps=3)
    grads = [np.array([1.0, 2.0, 3.0], "float32") * (i + 1) for i in range(6)]
    seen = []
    for g in grads:
        opt.apply([g], [var])
        seen.append((var.numpy().copy(), int(opt.iterations)))
    mean1, mean2 = np.mean(grads[:3], axis=0), np.mean(grads[3:], axis=0)
    for i in (0, 1):
        np.testing.assert_array_equal(seen[i][0], 0.0)
    np.testing.assert_allclose(seen[2][0], -0.5 * mean1, rtol=1e-6)
    np.testing.assert_allclose(seen[4][0], -0.5 * mean1, rtol=1e-6)
    np.testing.assert_allclose(seen[5][0], -0.5 * (mean1 + mean2), rtol=1e-6)
    assert [s[1] for s in seen] == [0, 0, 1, 1, 1, 2]
    assert int(opt._iterations) == 6
    names = [v.name for v in opt.variables]
    assert names[:2] == ["iteration", "learning_rate"] and "gradient_accumulator" in names[2]
    config = opt.get_config()
    assert config["gradient_accumulation_steps"] == 3
    assert fkeras.optimizers.SGD.from_config(config).gradient_accumulation_steps == 3


def _keras():
    if "KERAS_BACKEND" not in os.environ and importlib.util.find_spec("torch") is not None:
        os.environ["KERAS_BACKEND"] = "torch"  # Keras 3 defaults to TensorFlow
    return pytest.importorskip("keras")


@pytest.mark.parametrize("name,kwargs", [
    ("SGD", {"learning_rate": 0.1, "momentum": 0.9}),
    ("Adam", {"learning_rate": 0.01}),
    ("AdamW", {"learning_rate": 0.01, "weight_decay": 0.1, "clipnorm": 0.5}),
    ("Adam", {"learning_rate": 0.01, "use_ema": True, "ema_overwrite_frequency": 2}),
])
def test_gradient_accumulation_matches_keras(name, kwargs):
    keras = _keras()
    rng = np.random.default_rng(0)
    init = [rng.standard_normal((3, 2)).astype("float32"), rng.standard_normal(2).astype("float32")]
    grads = [[rng.standard_normal(v.shape).astype("float32") for v in init] for _ in range(7)]
    theirs = [keras.Variable(v) for v in init]
    ours = [fkeras.Variable(v) for v in init]
    k_opt = getattr(keras.optimizers, name)(gradient_accumulation_steps=3, **kwargs)
    f_opt = getattr(fkeras.optimizers, name)(gradient_accumulation_steps=3, **kwargs)
    for g in grads:
        k_opt.apply([keras.ops.convert_to_tensor(x) for x in g], theirs)
        f_opt.apply(g, ours)
        for a, b in zip(theirs, ours):
            np.testing.assert_allclose(keras.ops.convert_to_numpy(a), b.numpy(), rtol=1e-5,
                                       atol=1e-6)
        assert int(keras.ops.convert_to_numpy(k_opt.iterations)) == int(f_opt.iterations)
    assert len(k_opt.variables) == len(f_opt.variables)
    for a, b in zip(k_opt.variables, f_opt.variables):
        np.testing.assert_allclose(keras.ops.convert_to_numpy(a), b.numpy(), rtol=1e-5,
                                   atol=1e-6)


def test_fit_with_gradient_accumulation_matches_keras():
    keras = _keras()

    def build(lib):
        inp = lib.Input((4,))
        return lib.Model(inp, lib.layers.Dense(2)(lib.layers.Dense(5, activation="tanh")(inp)))

    theirs, ours = build(keras), build(fkeras)
    ours.set_weights([keras.ops.convert_to_numpy(w) for w in theirs.weights])
    theirs.compile(keras.optimizers.Adam(0.01, gradient_accumulation_steps=2), "mse")
    ours.compile(fkeras.optimizers.Adam(0.01, gradient_accumulation_steps=2), "mse")
    x = np.random.default_rng(1).standard_normal((40, 4)).astype("float32")
    y = np.random.default_rng(2).standard_normal((40, 2)).astype("float32")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hk = theirs.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    hf = ours.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    np.testing.assert_allclose(hk.history["loss"], hf.history["loss"], rtol=1e-5)
    for a, b in zip(theirs.weights, ours.get_weights()):
        np.testing.assert_allclose(keras.ops.convert_to_numpy(a), b, rtol=1e-5, atol=1e-6)
