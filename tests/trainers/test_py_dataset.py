"""PyDataset, Sequence-style objects and generators in fit/evaluate/predict: the order of
`__getitem__` calls and epoch hooks, shuffling, steps_per_epoch, errors and warnings, as Keras 3
does them (the sequences were recorded from keras 3.15, torch backend), and the thread
prefetch for `workers > 1`. Every run goes through `run_with_timeout`, so a regression that
hangs fails instead."""

import threading
import time
import warnings

import numpy as np
import pytest
from fidelity_models import run_with_timeout

import fkeras
from fkeras.trainers import py_dataset_adapter as pda


class Logged(fkeras.utils.PyDataset):
    """n batches of 4 rows; batch i is all i. Records reads and hooks in `log`."""

    def __init__(self, n=5, log=None, **kwargs):
        super().__init__(**kwargs)
        self.n, self.log = n, log if log is not None else []

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        self.log.append(i)
        return np.full((4, 3), i, "float32"), np.full((4, 1), i, "float32")

    def on_epoch_begin(self):
        self.log.append("B")

    def on_epoch_end(self):
        self.log.append("E")


def linear():
    inp = fkeras.Input((3,))
    model = fkeras.Model(inp, fkeras.layers.Dense(1)(inp))
    model.compile("sgd", "mse")
    return model


def trained_linear():
    model = linear()
    model.fit(np.ones((4, 3), "float32"), np.ones((4, 1), "float32"), verbose=0)
    return model


# Keras 3.15 (torch): the log of one call on a model already fit once.
SEQUENCES = [
    ("evaluate", {}, ["E", "B", 0, 1, 2, 3, 4, "E"]),
    ("predict", {}, ["B", 0, 1, 2, 3, 4, "E"]),
    ("fit", {"epochs": 2, "shuffle": False},
     ["E", "B", 0, 1, 2, 3, 4, "E", "B", 0, 1, 2, 3, 4, "E"]),
    ("fit", {"epochs": 3, "steps_per_epoch": 3, "shuffle": False},
     ["E", "B", 0, 1, 2, "E", "B", 3, 4, "E", "B", 0, 1, 2, "E"]),
    ("fit", {"epochs": 2, "steps_per_epoch": 7, "shuffle": False},
     ["E", "B", 0, 1, 2, 3, 4, "E", "B", 0, 1, 2, 3, 4, "E"]),
]


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("method,kwargs,expected", SEQUENCES)
def test_read_order_and_hooks(method, kwargs, expected, workers):
    model = trained_linear()
    ds = Logged(workers=workers)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_with_timeout(lambda: getattr(model, method)(ds, verbose=0, **kwargs))
    log = ds.log
    if workers > 1:  # prefetched reads run ahead of the hooks and of the steps
        log = [i for i in log if i not in ("B", "E")]
        expected = [i for i in expected if i not in ("B", "E")]
        log = log[:len(expected)]
    assert log == expected
    ran_out = [w for w in caught if "ran out of data" in str(w.message)]
    assert len(ran_out) == {3: 1, 7: 2}.get(kwargs.get("steps_per_epoch"), 0)


def test_first_fit_primes_with_one_batch_then_shuffles_each_epoch():
    model = linear()
    ds = Logged()
    run_with_timeout(lambda: model.fit(ds, epochs=1, shuffle=False, verbose=0))
    assert ds.log == ["B", 0, "E", "B", 0, 1, 2, 3, 4, "E"]  # a priming read, once
    ds.log.clear()
    fkeras.utils.set_random_seed(3)
    run_with_timeout(lambda: model.fit(ds, epochs=2, verbose=0))  # shuffle=True
    assert ds.log[:2] == ["E", "B"] and ds.log[7:9] == ["E", "B"] and ds.log[-1] == "E"
    first, second = ds.log[2:7], ds.log[9:14]
    assert sorted(first) == sorted(second) == [0, 1, 2, 3, 4]
    assert first != [0, 1, 2, 3, 4] or second != [0, 1, 2, 3, 4]


def test_validation_pydataset_and_params():
    model = trained_linear()
    log = []
    steps = []

    class Params(fkeras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            steps.append(self.params["steps"])

    run_with_timeout(lambda: model.fit(Logged(log=log), epochs=1, shuffle=False, verbose=0,
                                       validation_data=Logged(2, log=log),
                                       callbacks=[Params()]))
    assert log == ["E", "B", 0, 1, 2, 3, 4, "E", "E", "B", 0, 1, "E"]
    assert steps == [5]


def test_empty_dataset_fits_nothing():
    model = trained_linear()
    ds = Logged(0)
    hist = run_with_timeout(lambda: model.fit(ds, epochs=2, verbose=0))
    assert ds.log == ["E", "B", "E", "B", "E"] and hist.history == {}


def test_training_values_equal_arrays():
    """A PyDataset read in order trains exactly like the same batches from arrays."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((20, 3)).astype("float32")
    y = rng.standard_normal((20, 1)).astype("float32")

    class Batches(fkeras.utils.PyDataset):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)

        def __len__(self):
            return 4

        def __getitem__(self, i):
            return x[5 * i:5 * i + 5], y[5 * i:5 * i + 5]

    results = []
    for data in ("arrays", 1, 3):
        fkeras.utils.set_random_seed(1)
        model = linear()
        if data == "arrays":
            hist = model.fit(x, y, batch_size=5, epochs=2, shuffle=False, verbose=0)
        else:
            ds = Batches(workers=data, max_queue_size=2)
            hist = run_with_timeout(lambda: model.fit(ds, epochs=2, shuffle=False, verbose=0))
        results.append((hist.history["loss"], model.get_weights()))
    for losses, weights in results[1:]:
        np.testing.assert_allclose(losses, results[0][0], rtol=1e-6)
        for a, b in zip(weights, results[0][1]):
            np.testing.assert_allclose(a, b, rtol=1e-6)


class Boom(fkeras.utils.PyDataset):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def __len__(self):
        return 30

    def __getitem__(self, i):
        if i == 2:
            raise RuntimeError("boom at 2")
        time.sleep(0.005)
        return np.ones((2, 3), "float32"), np.ones((2, 1), "float32")


@pytest.mark.parametrize("kwargs", [{}, {"workers": 2}, {"workers": 3,
                                                         "use_multiprocessing": True}])
@pytest.mark.parametrize("method", ["fit", "evaluate", "predict"])
def test_errors_keep_their_type_and_threads_end(kwargs, method):
    model = trained_linear()
    before = threading.active_count()
    for _ in range(2):  # the pool is usable again after a failure
        with pytest.raises(RuntimeError, match="boom at 2"):
            run_with_timeout(lambda: getattr(model, method)(Boom(**kwargs), verbose=0))
    deadline = time.time() + 10
    while threading.active_count() > before and time.time() < deadline:
        time.sleep(0.05)
    assert threading.active_count() <= before


def test_prefetch_is_bounded_and_parallel():
    ahead = []

    class Slow(fkeras.utils.PyDataset):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.done, self.consumed = 0, 0

        def __len__(self):
            return 24

        def __getitem__(self, i):
            time.sleep(0.03)
            self.done += 1
            ahead.append(self.done - self.consumed)
            return np.ones((2, 3), "float32"), np.ones((2, 1), "float32")

    ds = Slow(workers=4, max_queue_size=3)

    class Count(fkeras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            ds.consumed += 1

    model = trained_linear()
    start = time.perf_counter()
    run_with_timeout(lambda: model.fit(ds, shuffle=False, verbose=0, callbacks=[Count()]))
    elapsed = time.perf_counter() - start
    assert max(ahead) <= 3 + 1  # the queue bound (+1: the batch being consumed)
    assert elapsed < 24 * 0.03  # 4 threads beat one at a time


def test_sequence_style_object():
    log = []

    class Seq:
        def __len__(self):
            return 3

        def __getitem__(self, i):  # never raises IndexError: iter() would never end
            log.append(i)
            return np.ones((2, 3), "float32"), np.ones((2, 1), "float32")

    model = trained_linear()
    run_with_timeout(lambda: model.fit(Seq(), epochs=2, shuffle=False, verbose=0))
    assert log == [0, 1, 2, 0, 1, 2]
    assert run_with_timeout(lambda: model.predict(Seq(), verbose=0)).shape == (6, 1)
    assert fkeras.utils.Sequence is fkeras.utils.PyDataset


def test_batch_forms():
    model = trained_linear()
    x = np.ones((2, 3), "float32")

    class Forms(fkeras.utils.PyDataset):
        def __init__(self, form):
            super().__init__()
            self.form = form

        def __len__(self):
            return 2

        def __getitem__(self, i):
            return {"array": x, "tuple1": (x,), "list": [x, np.ones((2, 1), "float32")],
                    "dict": {model.input_names[0]: x}, "wrong_dict": {"x": x},
                    "four": (x, x, x, x)}[self.form]

    for form in ("array", "tuple1", "dict"):
        assert run_with_timeout(lambda: model.predict(Forms(form), verbose=0)).shape == (4, 1)
    run_with_timeout(lambda: model.fit(Forms("list"), verbose=0))
    with pytest.raises(ValueError, match="Expected the following keys"):
        run_with_timeout(lambda: model.predict(Forms("wrong_dict"), verbose=0))
    with pytest.raises(ValueError, match=r"must return a tuple or a dict. If a tuple"):
        run_with_timeout(lambda: model.fit(Forms("four"), verbose=0))
    with pytest.raises(ValueError, match="Target data is missing"):
        run_with_timeout(lambda: model.fit(Forms("array"), verbose=0))


@pytest.mark.parametrize("kwargs,message", [
    ({"y": np.ones((2, 1))}, "When providing `x` as a PyDataset, `y` should not be passed"),
    ({"sample_weight": np.ones(2)}, "`sample_weights` should not be passed"),
    ({"validation_split": 0.5},
     "`validation_split` is only supported for tensors or NumPy arrays"),
])
def test_argument_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        trained_linear().fit(Logged(), verbose=0, **kwargs)


def test_attributes_warning_and_infinite_dataset():
    ds = Logged(workers=3, use_multiprocessing=True, max_queue_size=4)
    assert (ds.workers, ds.use_multiprocessing, ds.max_queue_size, ds.num_batches) == (
        3, True, 4, 5)

    class NoSuper(fkeras.utils.PyDataset):
        def __init__(self):
            pass

        def __len__(self):
            return 1

        def __getitem__(self, i):
            return np.ones((2, 3), "float32"), np.ones((2, 1), "float32")

    assert (NoSuper().workers, NoSuper().max_queue_size) == (1, 10)
    with pytest.warns(UserWarning, match=r"should call `super\(\).__init__\(\*\*kwargs\)`"):
        trained_linear().fit(NoSuper(), verbose=0)

    reads = []

    class Infinite(fkeras.utils.PyDataset):
        @property
        def num_batches(self):
            return None

        def __getitem__(self, i):
            reads.append(i)
            return np.ones((2, 3), "float32"), np.ones((2, 1), "float32")

    model = trained_linear()
    with pytest.warns(UserWarning, match="provided as an infinite PyDataset"):
        hist = run_with_timeout(lambda: model.fit(Infinite(), epochs=2, steps_per_epoch=3,
                                                  verbose=0))
    assert reads == list(range(6)) and len(hist.history["loss"]) == 2
    with pytest.raises(ValueError, match="no length"):
        run_with_timeout(lambda: model.fit(Infinite(), verbose=0))


def _gen(n, log):
    for k in range(n):
        log.append(k)
        yield np.full((2, 3), k, "float32"), np.full((2, 1), k, "float32")


@pytest.mark.parametrize("n,kwargs,reads,ran_out", [
    (3, {}, [[0, 1, 2], []], 2),  # epoch 1 gets nothing
    (10, {"steps_per_epoch": 2}, [[0, 1], [2, 3]], 0),  # one generator, read on
    (3, {"steps_per_epoch": 2}, [[0, 1], [2]], 1),
])
def test_generators(n, kwargs, reads, ran_out):
    log = []

    class Epochs(fkeras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            log.append(f"epoch{epoch}")

        def on_train_begin(self, logs=None):
            log.append(self.params["steps"])

    model = trained_linear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hist = run_with_timeout(lambda: model.fit(_gen(n, log), epochs=2, verbose=0,
                                                  callbacks=[Epochs()], **kwargs))
    assert log == [kwargs.get("steps_per_epoch"), "epoch0", *reads[0], "epoch1", *reads[1]]
    messages = [str(w.message) for w in caught]
    assert sum("ran out of data" in m for m in messages) == ran_out
    assert any("provided as a generator" in m for m in messages)  # shuffle=True ignored
    assert len(hist.epoch) == 2


def test_generator_validation_split_error():
    with pytest.raises(ValueError, match="Found incompatible type in the input"):
        trained_linear().fit(_gen(3, []), validation_split=0.5, verbose=0)


def test_adapter_detection():
    assert pda.is_py_dataset(Logged()) and not pda.is_py_dataset(np.ones(3))
    assert not pda.is_py_dataset([(1, 2)]) and not pda.is_py_dataset({"a": 1})
    assert pda.is_generator(_gen(1, [])) and not pda.is_generator([1])


def test_class_weight_with_pydataset_equals_sample_weights():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((12, 3)).astype("float32")
    y = rng.integers(0, 2, (12, 1)).astype("float32")

    class Batches(fkeras.utils.PyDataset):
        def __init__(self, with_weights):
            super().__init__()
            self.with_weights = with_weights

        def __len__(self):
            return 3

        def __getitem__(self, i):
            s = slice(4 * i, 4 * i + 4)
            if self.with_weights:
                return x[s], y[s], np.where(y[s][:, 0] == 1, 3.0, 1.0).astype("float32")
            return x[s], y[s]

    weights = []
    for kwargs, with_weights in (({"class_weight": {0: 1.0, 1: 3.0}}, False), ({}, True)):
        fkeras.utils.set_random_seed(2)
        model = linear()
        run_with_timeout(lambda: model.fit(Batches(with_weights), shuffle=False, verbose=0,
                                           **kwargs))
        weights.append(model.get_weights())
    for a, b in zip(*weights):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_infinite_generator_with_steps_and_ignored_batch_size():
    log = []

    def forever():
        k = 0
        while True:
            log.append(k)
            yield np.full((2, 3), k % 3, "float32"), np.ones((2, 1), "float32")
            k += 1

    model = trained_linear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hist = run_with_timeout(lambda: model.fit(forever(), steps_per_epoch=3, epochs=2,
                                                  batch_size=7, shuffle=False, verbose=0))
    assert log == list(range(6)) and len(hist.history["loss"]) == 2
    assert not any("ran out" in str(w.message) for w in caught)
    gen = forever()
    assert run_with_timeout(lambda: model.predict(gen, steps=2, verbose=0)).shape == (4, 1)
    assert run_with_timeout(lambda: model.evaluate(gen, steps=2, verbose=0)) >= 0
