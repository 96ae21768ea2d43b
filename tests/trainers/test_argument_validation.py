"""fit/evaluate/predict and the *_on_batch methods check their arguments before any work: a
refused call raises a ValueError naming the argument, leaves the weights untouched and fires
no callback. Where Keras 3 raises too, it raises the same exception type (checked against
keras on the torch backend when it is installed)."""

import os

import numpy as np
import pytest

import fkeras

RNG = np.random.default_rng(0)
X = RNG.normal(size=(20, 3)).astype("float32")
Y = RNG.normal(size=(20, 1)).astype("float32")


def gen():
    for _ in range(3):
        yield X[:4], Y[:4]


def fit(**kw):
    return ("fit", dict(dict(x=X, y=Y, verbose=0), **kw))


def evaluate(**kw):
    return ("evaluate", dict(dict(x=X, y=Y, verbose=0), **kw))


def predict(**kw):
    return ("predict", dict(dict(x=X, verbose=0), **kw))


# (id, (method, kwargs), expected substring); every row raises ValueError in fkeras.
# `keras` marks rows where Keras 3.15 (torch) raises ValueError as well.
CASES = [
    ("fit-batch_size-negative", fit(batch_size=-4),
     "batch_size should be a positive integer value, but got batch_size=-4", "keras"),
    ("fit-batch_size-zero", fit(batch_size=0), "but got batch_size=0", None),
    ("fit-batch_size-float", fit(batch_size=2.5), "but got batch_size=2.5", "keras"),
    ("fit-batch_size-whole-float", fit(batch_size=4.0), "but got batch_size=4.0", "keras"),
    ("fit-batch_size-bool", fit(batch_size=True), "but got batch_size=True", "keras"),
    ("fit-batch_size-str", fit(batch_size="4"), "but got batch_size='4'", None),
    ("fit-epochs-zero", fit(epochs=0), "epochs should be a positive integer value", None),
    ("fit-epochs-negative", fit(epochs=-1), "but got epochs=-1", None),
    ("fit-epochs-float", fit(epochs=1.5), "but got epochs=1.5", None),
    ("fit-epochs-none", fit(epochs=None), "but got epochs=None", None),
    ("fit-initial_epoch-negative", fit(epochs=2, initial_epoch=-1),
     "`initial_epoch` should be a non-negative integer value", None),
    ("fit-initial_epoch-equal", fit(epochs=2, initial_epoch=2),
     "initial_epoch=2 with epochs=2 would train nothing", None),
    ("fit-initial_epoch-after", fit(epochs=2, initial_epoch=3), "would train nothing", None),
    ("fit-initial_epoch-float", fit(epochs=3, initial_epoch=1.5), "initial_epoch=1.5", None),
    ("fit-steps_per_epoch-zero", fit(steps_per_epoch=0),
     "`steps_per_epoch` should be a positive integer value or None", None),
    ("fit-steps_per_epoch-negative", fit(steps_per_epoch=-1), "steps_per_epoch=-1", "keras"),
    ("fit-steps_per_epoch-float", fit(steps_per_epoch=1.5), "steps_per_epoch=1.5", None),
    ("fit-validation_steps-zero", fit(validation_split=0.2, validation_steps=0),
     "`validation_steps` should be a positive integer", None),
    ("fit-validation_steps-negative", fit(validation_split=0.2, validation_steps=-1),
     "validation_steps=-1", "keras"),
    ("fit-validation_split-negative", fit(validation_split=-0.2),
     "`validation_split` should be a float in [0, 1)", None),
    ("fit-validation_split-one", fit(validation_split=1.0), "validation_split=1.0", "keras"),
    ("fit-validation_split-above-one", fit(validation_split=1.5), "validation_split=1.5", None),
    ("fit-validation_split-str", fit(validation_split="a"), "validation_split='a'", None),
    ("fit-validation_split-generator", ("fit", "generator"),
     "Argument `validation_split` is only supported for tensors or NumPy arrays", "keras"),
    ("fit-validation_batch_size-negative", fit(validation_split=0.2, validation_batch_size=-1),
     "validation_batch_size should be a positive integer value, but got "
     "validation_batch_size=-1", "keras"),
    ("fit-validation_batch_size-zero", fit(validation_split=0.2, validation_batch_size=0),
     "validation_batch_size=0", None),
    ("fit-validation_freq-zero", fit(validation_split=0.2, validation_freq=0),
     "`validation_freq` should be a positive integer", None),
    ("fit-validation_freq-negative", fit(validation_split=0.2, validation_freq=-1),
     "validation_freq=-1", None),
    ("fit-validation_freq-float", fit(validation_split=0.2, validation_freq=1.5),
     "Expected `validation_freq` to be a list or int", "keras"),
    ("fit-validation_freq-list-zero", fit(validation_split=0.2, validation_freq=[0, 1]),
     "validation_freq=[0, 1]", None),
    ("fit-verbose-3", fit(verbose=3), "`verbose` should be 'auto', 0", None),
    ("fit-verbose-negative", fit(verbose=-1), "verbose=-1", None),
    ("fit-verbose-str", fit(verbose="x"), "verbose='x'", None),
    ("fit-empty", fit(x=X[:0], y=Y[:0]),
     "Expected input data to be non-empty: `fit` received `x` with 0 samples", "keras"),
    ("fit-empty-validation_data", fit(validation_data=(X[:0], Y[:0])),
     "`fit (validation_data)` received `x` with 0 samples", None),
    ("fit-x-none", fit(x=None, y=None), "`fit` needs input data", None),
    ("fit-x-y-mismatch", fit(y=Y[:10]), "Data cardinality is ambiguous", "keras"),
    ("fit-empty-x-only", fit(x=X[:0]), "'x' sizes: 0", "keras"),
    ("fit-sample_weight-mismatch", fit(sample_weight=np.ones(5)),
     "'sample_weight' sizes: 5", "keras"),
    ("fit-class_weight-str-key", fit(class_weight={"a": 1.0}),
     "`class_weight` keys should be class indices (non-negative integers), but got the key "
     "'a'", None),
    ("fit-class_weight-negative-key", fit(class_weight={-1: 2.0}), "the key -1", None),
    ("fit-class_weight-fraction-key", fit(class_weight={0.5: 2.0}), "the key 0.5", None),
    ("fit-class_weight-nan-value", fit(class_weight={0: float("nan")}),
     "`class_weight` values should be finite numbers", None),
    ("fit-class_weight-list", fit(class_weight=[1.0]),
     "`class_weight` should be a dict mapping class indices to weights", None),
    ("evaluate-batch_size-negative", evaluate(batch_size=-4), "but got batch_size=-4", "keras"),
    ("evaluate-batch_size-zero", evaluate(batch_size=0), "but got batch_size=0", None),
    ("evaluate-empty", evaluate(x=X[:0], y=Y[:0]), "`evaluate` received `x` with 0 samples",
     "keras"),
    ("evaluate-steps-zero", evaluate(steps=0), "`steps` should be a positive integer", None),
    ("evaluate-steps-negative", evaluate(steps=-1), "steps=-1", "keras"),
    ("evaluate-x-y-mismatch", evaluate(y=Y[:10]), "Data cardinality is ambiguous", "keras"),
    ("evaluate-verbose-3", evaluate(verbose=3), "verbose=3", None),
    ("predict-batch_size-negative", predict(batch_size=-4), "but got batch_size=-4", "keras"),
    ("predict-batch_size-zero", predict(batch_size=0), "but got batch_size=0", None),
    ("predict-batch_size-float", predict(batch_size=2.5), "but got batch_size=2.5", "keras"),
    ("predict-empty", predict(x=X[:0]), "`predict` received `x` with 0 samples", None),
    ("predict-steps-zero", predict(steps=0), "steps=0", None),
    ("predict-steps-negative", predict(steps=-1), "steps=-1", "keras"),
    ("predict-x-none", predict(x=None), "`predict` needs input data", None),
    ("train_on_batch-empty", ("train_on_batch", dict(x=X[:0], y=Y[:0])),
     "`train_on_batch` received `x` with 0 samples", None),
    ("train_on_batch-mismatch", ("train_on_batch", dict(x=X, y=Y[:10])),
     "Data cardinality is ambiguous", None),
    ("train_on_batch-class_weight", ("train_on_batch", dict(x=X, y=Y, class_weight={"a": 1})),
     "the key 'a'", None),
    ("test_on_batch-empty", ("test_on_batch", dict(x=X[:0], y=Y[:0])),
     "`test_on_batch` received `x` with 0 samples", None),
]


def _call(model, method, kwargs):
    if kwargs == "generator":
        return model.fit(gen(), validation_split=0.2, verbose=0)
    return getattr(model, method)(**kwargs)


class Recorder(fkeras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.events = []

    def on_train_begin(self, logs=None):
        self.events.append("train_begin")

    def on_test_begin(self, logs=None):
        self.events.append("test_begin")

    def on_predict_begin(self, logs=None):
        self.events.append("predict_begin")


def make_model(lib=fkeras):
    model = lib.Sequential([lib.Input((3,)), lib.layers.Dense(1)])
    model.compile("sgd", "mse")
    return model


@pytest.mark.parametrize("call,match", [(c[1], c[2]) for c in CASES],
                         ids=[c[0] for c in CASES])
def test_refused_before_any_work(call, match):
    method, kwargs = call
    model = make_model()
    before = [w.copy() for w in model.get_weights()]
    recorder = Recorder()
    if method in ("fit", "evaluate", "predict") and kwargs != "generator":
        kwargs = dict(kwargs, callbacks=[recorder])
    with pytest.raises(ValueError) as info:
        _call(model, method, kwargs)
    assert match in str(info.value)
    assert "_forward" not in str(info.value)  # never an internal kernel's message
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert recorder.events == []


KERAS_ROWS = [c for c in CASES if c[3] == "keras"]


@pytest.mark.parametrize("call", [c[1] for c in KERAS_ROWS], ids=[c[0] for c in KERAS_ROWS])
def test_keras_refuses_these_too(call):
    keras = pytest.importorskip("keras")
    if os.environ.get("KERAS_BACKEND") != "torch":
        pytest.skip("parity measured on Keras's torch backend")
    method, kwargs = call
    if kwargs != "generator":
        kwargs = {k: v for k, v in kwargs.items() if k != "callbacks"}
    with pytest.raises(ValueError):
        _call(make_model(keras), method, kwargs)


@pytest.mark.parametrize("kwargs", [
    dict(batch_size=np.int64(4)), dict(batch_size=None, steps_per_epoch=2),
    dict(epochs=np.int32(2), initial_epoch=1), dict(verbose=False), dict(verbose=True),
    dict(verbose="auto"), dict(verbose=2), dict(validation_split=0, validation_freq=[1, 2]),
    dict(validation_split=np.float32(0.25), validation_batch_size=3, validation_steps=1),
    dict(class_weight={0: 1.0, 1.0: 2.0, np.int64(2): np.float32(0.5)}),
], ids=lambda kw: ",".join(f"{k}={v!r}" for k, v in kw.items()))
def test_valid_arguments_still_train(kwargs, capsys):
    model = make_model()
    y = (Y > 0).astype("float32") if "class_weight" in kwargs else Y
    history = model.fit(X, y, **dict(dict(verbose=0), **kwargs))
    assert all(np.isfinite(v).all() for v in history.history.values())
    assert len(history.history["loss"]) == kwargs.get("epochs", 1) - kwargs.get(
        "initial_epoch", 0)


def test_predict_on_batch_of_zero_samples_is_allowed():
    """Keras 3 returns an empty batch here; so does fkeras (no loss is made up)."""
    out = make_model().predict_on_batch(X[:0])
    assert out.shape == (0, 1)


def test_negative_labels_weigh_one_under_class_weight():
    """A label outside the class indices weighs 1.0 (it never wraps to the last class)."""
    from fkeras.trainers.data_adapter import class_weights_to_sample_weight

    w = class_weights_to_sample_weight(np.array([-1.0, 0.0, 1.0, 2.0]), {1: 3.0, 2: 5.0})
    np.testing.assert_array_equal(w, [1.0, 1.0, 3.0, 5.0])


def test_class_weight_changes_the_loss_as_sample_weight_does():
    """{class: weight} equals passing the per-sample weights (float keys that are whole
    numbers name the same class, as in Keras)."""
    y = (Y > 0).astype("float32")
    a, b = make_model(), make_model()
    b.set_weights(a.get_weights())
    la = a.fit(X, y, class_weight={0: 1.0, 1.0: 3.0}, shuffle=False, verbose=0).history
    lb = b.fit(X, y, sample_weight=np.where(y[:, 0] > 0, 3.0, 1.0), shuffle=False,
               verbose=0).history
    np.testing.assert_allclose(la["loss"], lb["loss"], rtol=1e-6)


def test_iterable_data_is_not_refused_for_a_validation_split_of_zero():
    model = make_model()
    history = model.fit(gen(), validation_split=0.0, verbose=0)
    assert len(history.history["loss"]) == 1


@pytest.mark.parametrize("steps,expected", [(1, [20]), (2, [10, 10]), (3, [7, 7, 6]),
                                            (None, [20])])
def test_steps_without_batch_size_split_the_data_as_keras(steps, expected):
    """Keras 3: with `steps_per_epoch` and no `batch_size`, each batch holds
    ceil(samples / steps) samples (not 32), so the epoch covers the data once."""
    model = make_model()
    seen = []
    step = model._fk_train_step

    def spy(state, xs, ys, sws):
        seen.append(len(xs[0]))
        return step(state, xs, ys, sws)

    model._fk_train_step = spy
    model.fit(X, Y, steps_per_epoch=steps, verbose=0, shuffle=False)
    assert seen == expected
