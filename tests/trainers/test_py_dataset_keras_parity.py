"""PyDataset and generator reading in fit/evaluate/predict compared with Keras 3 itself (torch
backend) when `keras` is installed; skipped otherwise. The same logged dataset runs through
both libraries and the logs of `__getitem__` calls and epoch hooks must be equal."""

import importlib.util
import os
import warnings

import numpy as np
import pytest

if "KERAS_BACKEND" not in os.environ and importlib.util.find_spec("torch") is not None:
    os.environ["KERAS_BACKEND"] = "torch"
keras = pytest.importorskip("keras")

from fidelity_models import run_with_timeout  # noqa: E402

import fkeras  # noqa: E402


def logged_dataset(lib, n, log, **kwargs):
    class Logged(lib.utils.PyDataset):
        def __init__(self):
            super().__init__(**kwargs)

        def __len__(self):
            return n

        def __getitem__(self, i):
            log.append(i)
            return np.full((4, 3), i, "float32"), np.full((4, 1), i, "float32")

        def on_epoch_begin(self):
            log.append("B")

        def on_epoch_end(self):
            log.append("E")

    return Logged()


def _linear(lib):
    inp = lib.Input((3,))
    model = lib.Model(inp, lib.layers.Dense(1)(inp))
    model.compile("sgd", "mse")
    return model


SCENARIOS = {
    "first_fit": [("fit", 5, {"epochs": 2, "shuffle": False})],
    "fit_then_evaluate_predict": [("fit", 5, {"shuffle": False}), ("evaluate", 5, {}),
                                  ("predict", 5, {})],
    "first_evaluate": [("evaluate", 5, {})],
    "steps_below_len": [("fit", 5, {"epochs": 3, "steps_per_epoch": 3, "shuffle": False})],
    "steps_above_len": [("fit", 5, {"epochs": 2, "steps_per_epoch": 7, "shuffle": False})],
    "validation": [("fit", 5, {"shuffle": False, "validation": 2, "epochs": 2})],
    "empty": [("fit", 5, {"shuffle": False}), ("fit", 0, {"epochs": 2})],
}


def _run(lib, steps):
    log, out = [], []
    model = _linear(lib)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for method, n, kwargs in steps:
            kwargs = dict(kwargs)
            if "validation" in kwargs:
                kwargs["validation_data"] = logged_dataset(lib, kwargs.pop("validation"), log)
            result = run_with_timeout(lambda: getattr(model, method)(
                logged_dataset(lib, n, log), verbose=0, **kwargs))
            log.append(f"/{method}")
            if method == "fit":
                out.append(sorted(result.history))
            elif method == "predict":
                out.append(result.shape)
    ran_out = sum("ran out of data" in str(w.message) for w in caught)
    return log, out, ran_out


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_reads_and_hooks_match_keras(name):
    assert _run(fkeras, SCENARIOS[name]) == _run(keras, SCENARIOS[name])


def test_shuffled_fit_reads_permutations_like_keras():
    ours, theirs = [], []
    run_with_timeout(lambda: _linear(fkeras).fit(logged_dataset(fkeras, 5, ours), epochs=3,
                                                 verbose=0))
    run_with_timeout(lambda: _linear(keras).fit(logged_dataset(keras, 5, theirs), epochs=3,
                                                verbose=0))

    def shape(log):  # the hooks and which reads are a permutation of one pass
        return ["B" if x == "B" else "E" if x == "E" else "i" for x in log]

    assert shape(ours) == shape(theirs)
    passes = [[x for x in ours[i + 1:i + 6]] for i, x in enumerate(ours)
              if x == "B" and i > 3]
    assert all(sorted(p) == [0, 1, 2, 3, 4] for p in passes)


def _gen(n, log):
    for k in range(n):
        log.append(k)
        yield np.full((2, 3), k, "float32"), np.full((2, 1), k, "float32")


@pytest.mark.parametrize("n,kwargs", [(3, {}), (10, {"steps_per_epoch": 2}),
                                      (3, {"steps_per_epoch": 2})])
def test_generator_epochs_and_warnings_match_keras(n, kwargs):
    def run(lib):
        model = _linear(lib)
        model.fit(np.ones((2, 3), "float32"), np.ones((2, 1), "float32"), verbose=0)
        log, params = [], []

        class Params(lib.callbacks.Callback):
            def on_train_begin(self, logs=None):
                params.append(self.params["steps"])

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            hist = run_with_timeout(lambda: model.fit(_gen(n, log), epochs=2, verbose=0,
                                                      callbacks=[Params()], **kwargs))
        kinds = sorted(str(w.message)[:40] for w in caught
                       if "ran out" in str(w.message) or "shuffle" in str(w.message))
        return log, params, kinds, len(hist.epoch)

    assert run(fkeras) == run(keras)


@pytest.mark.parametrize("kwargs", [{"y": np.ones((2, 1))}, {"sample_weight": np.ones(2)},
                                    {"validation_split": 0.5}])
def test_argument_errors_match_keras(kwargs):
    messages = []
    for lib in (fkeras, keras):
        with pytest.raises(ValueError) as info:
            _linear(lib).fit(logged_dataset(lib, 2, []), verbose=0, **kwargs)
        messages.append(str(info.value).split("[<class")[0])
    assert messages[0] == messages[1]


@pytest.mark.parametrize("workers", [1, 2])
def test_getitem_error_matches_keras(workers):
    def boom(lib):
        class Boom(lib.utils.PyDataset):
            def __init__(self):
                super().__init__(workers=workers)

            def __len__(self):
                return 4

            def __getitem__(self, i):
                if i == 2:
                    raise RuntimeError("boom at 2")
                return np.ones((2, 3), "float32"), np.ones((2, 1), "float32")

        with pytest.raises(Exception) as info:
            run_with_timeout(lambda: _linear(lib).fit(Boom(), shuffle=False, verbose=0))
        return type(info.value), str(info.value)

    assert boom(fkeras) == boom(keras)
