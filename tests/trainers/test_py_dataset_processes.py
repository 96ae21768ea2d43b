"""PyDataset with `use_multiprocessing=True`: batches computed in worker processes, in order,
at most `max_queue_size` ahead, `on_epoch_end` seen by the next pass's workers, worker errors
raised in the main process with the worker's traceback, a dead worker failing fast, and no
process left behind. Every run goes through `run_with_timeout`, so a hang fails."""

import multiprocessing
import os
import time
from concurrent.futures.process import BrokenProcessPool

import numpy as np
import pytest
from fidelity_models import run_with_timeout

import fkeras
from fkeras.trainers import py_dataset_adapter as pda


class Rows(fkeras.utils.PyDataset):
    """Batch i: 4 rows of seeded noise; y = row sums. Records the computing process's pid."""

    def __init__(self, n=6, sleep=0.0, trace_dir=None, **kwargs):
        super().__init__(**kwargs)
        self.n, self.sleep, self.trace_dir = n, sleep, trace_dir
        self.epoch = 0
        self.transform = lambda a: a  # not picklable: fine, the workers are forked

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.trace_dir:
            open(os.path.join(self.trace_dir, str(i)), "w").close()
        if self.sleep:
            time.sleep(self.sleep * ((i * 7) % 3))  # batches finish out of order
        x = np.random.default_rng(i).normal(size=(4, 3)).astype("float32")
        y = np.stack([x.sum(1), np.full(4, self.epoch), np.full(4, os.getpid())], 1)
        return self.transform(x), y.astype("float64")

    def on_epoch_end(self):
        self.epoch += 1


def model_3_to_3(seed=1):
    fkeras.utils.set_random_seed(seed)
    inp = fkeras.Input((3,))
    model = fkeras.Model(inp, fkeras.layers.Dense(3)(inp))
    model.compile("sgd", "mse")
    return model


fork_only = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                               reason="the test dataset holds a lambda: needs forked workers")


def new_children(before, wait_s=10.0):
    """Processes started by this test (not by others before it) still alive after wait_s."""
    deadline = time.time() + wait_s
    while True:
        alive = [p for p in multiprocessing.active_children() if p not in before]
        if not alive or time.time() > deadline:
            return alive
        time.sleep(0.05)


@pytest.fixture
def before():
    return set(multiprocessing.active_children())


def read_pass(ds):
    """One pass as fit reads it after reset (on_epoch_end once before)."""
    adapter = pda.PyDatasetAdapter(ds)
    adapter.reset()
    return [b for _, b in adapter.epoch(None)]


@fork_only
@pytest.mark.parametrize("workers", [1, 3])
def test_batches_come_from_worker_processes_in_order(before, workers):
    ds = Rows(workers=workers, use_multiprocessing=True, sleep=0.01)
    batches = run_with_timeout(lambda: read_pass(ds))
    assert [b[0].tolist() for b in batches] == [Rows()[i][0].tolist() for i in range(6)]
    pids = {int(b[1][0, 2]) for b in batches}
    assert os.getpid() not in pids and 1 <= len(pids) <= workers
    assert not new_children(before)


@fork_only
def test_on_epoch_end_is_seen_by_the_next_pass():
    ds = Rows(workers=2, use_multiprocessing=True)
    adapter = pda.PyDatasetAdapter(ds)
    adapter.reset()  # epoch 1 (Keras runs on_epoch_end before the first epoch)
    first = run_with_timeout(lambda: [b for _, b in adapter.epoch(None)])
    second = run_with_timeout(lambda: [b for _, b in adapter.epoch(None)])
    assert {b[1][0, 1] for b in first} == {1} and {b[1][0, 1] for b in second} == {2}
    assert ds.epoch == 3


@fork_only
@pytest.mark.parametrize("shuffle", [False, True])
def test_fit_equals_one_worker(shuffle):
    weights = {}
    for kwargs in ({}, {"workers": 3, "use_multiprocessing": True},
                   {"workers": 1, "use_multiprocessing": True}, {"workers": 3}):
        model = model_3_to_3()
        ds = Rows(n=8, sleep=0.003, **kwargs)
        ds.__class__ = RowsXY
        run_with_timeout(lambda: model.fit(ds, epochs=3, shuffle=shuffle, verbose=0))
        weights[str(kwargs)] = [w.numpy() for w in model.weights]
    reference = weights.pop("{}")
    for name, got in weights.items():
        for a, b in zip(got, reference):
            np.testing.assert_array_equal(a, b, err_msg=name)


class RowsXY(Rows):
    """Rows with y = the row sums only (a trainable target)."""

    def __getitem__(self, i):
        x, y = super().__getitem__(i)
        return x, np.repeat(y[:, :1], 3, axis=1).astype("float32")


@fork_only
def test_predict_keeps_the_order():
    model = model_3_to_3()
    ds = Rows(n=9, sleep=0.01, workers=4, use_multiprocessing=True)
    got = run_with_timeout(lambda: model.predict(ds, verbose=0))
    x = np.concatenate([Rows()[i][0] for i in range(9)])
    np.testing.assert_allclose(got, model.predict(x, verbose=0), rtol=1e-6)


@fork_only
def test_prefetch_is_bounded_by_max_queue_size(tmp_path):
    ds = Rows(n=12, workers=3, use_multiprocessing=True, max_queue_size=2,
              trace_dir=str(tmp_path))
    started = []

    class Watch(fkeras.callbacks.Callback):
        def on_predict_batch_end(self, batch, logs=None):
            time.sleep(0.05)  # a slow consumer: the workers could run far ahead
            started.append((batch, len(os.listdir(tmp_path))))

    run_with_timeout(lambda: model_3_to_3().predict(ds, verbose=0, callbacks=[Watch()]))
    assert all(n <= batch + 1 + 2 + 1 for batch, n in started)  # +1: the one just asked for
    assert started[-1][1] == 12


class Boom(fkeras.utils.PyDataset):
    def __init__(self, error="plain", **kwargs):
        super().__init__(**kwargs)
        self.error = error

    def __len__(self):
        return 5

    def __getitem__(self, i):
        if i == 2:
            failing_helper(self.error)
        return np.ones((2, 3), "float32"), np.ones((2, 3), "float32")


class Unpicklable(Exception):
    def __init__(self, a, b):
        super().__init__(f"{a} and {b}")
        self.lock = multiprocessing.Lock()

    def __reduce__(self):
        raise TypeError("no pickling")


def failing_helper(kind):
    if kind == "plain":
        raise KeyError("boom at 2")
    if kind == "unpicklable":
        raise Unpicklable("boom", "more")
    os._exit(3)  # the worker dies


@pytest.mark.parametrize("method", ["fit", "evaluate", "predict"])
def test_worker_error_is_raised_with_its_traceback(before, method):
    model = model_3_to_3()
    for _ in range(2):  # the next call works with fresh workers
        with pytest.raises(KeyError, match="boom at 2") as info:
            run_with_timeout(lambda: getattr(model, method)(
                Boom(workers=2, use_multiprocessing=True), verbose=0))
        cause = str(info.value.__cause__)
        assert "failing_helper" in cause and "__getitem__" in cause
    assert not new_children(before)


def test_unpicklable_worker_error_and_dead_worker(before):
    model = model_3_to_3()
    with pytest.raises(RuntimeError, match=r"Unpicklable: boom and more[\s\S]*failing_helper"):
        run_with_timeout(lambda: model.predict(
            Boom("unpicklable", workers=2, use_multiprocessing=True), verbose=0))
    start = time.perf_counter()
    with pytest.raises(BrokenProcessPool):
        run_with_timeout(lambda: model.predict(
            Boom("die", workers=2, use_multiprocessing=True), verbose=0), seconds=30)
    assert time.perf_counter() - start < 20
    assert not new_children(before)


@fork_only
def test_abandoned_pass_stops_its_workers(before):
    ds = Rows(n=50, sleep=0.01, workers=3, use_multiprocessing=True)

    class Stop(fkeras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if batch == 2:
                self.model.stop_training = True

    ds.__class__ = RowsXY
    run_with_timeout(lambda: model_3_to_3().fit(ds, epochs=5, verbose=0, callbacks=[Stop()]))
    assert not new_children(before)


@fork_only
def test_workers_run_fkeras_kernels_after_the_parent_did():
    """The parent's kernel thread pool is running when the workers fork: each child builds
    its own on first use (pthread_atfork), so a batch computed with fkeras works."""
    a = np.random.default_rng(0).normal(size=(128, 128)).astype("float32")
    model = model_3_to_3()
    inp = fkeras.Input((128,))
    big = fkeras.Model(inp, fkeras.layers.Dense(128)(inp))
    want = big.predict(a, verbose=0)

    class Computed(fkeras.utils.PyDataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return big.predict(a, verbose=0)[i:i + 2, :3], np.zeros((2, 3), "float32")

    ds = Computed(workers=2, use_multiprocessing=True)
    got = run_with_timeout(lambda: read_pass(ds), seconds=60)
    for i, (x, _) in enumerate(got):
        np.testing.assert_allclose(x, want[i:i + 2, :3], rtol=1e-5, atol=1e-6)
    assert model.built


class Endless(fkeras.utils.PyDataset):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    @property
    def num_batches(self):
        return None

    def __getitem__(self, i):
        x = np.full((2, 3), float(i % 5), "float32")
        return x, x


def test_infinite_dataset_with_steps_per_epoch(before):
    model = model_3_to_3()
    ref = model_3_to_3()
    run_with_timeout(lambda: model.fit(Endless(workers=2, use_multiprocessing=True),
                                       steps_per_epoch=4, epochs=3, verbose=0))
    run_with_timeout(lambda: ref.fit(Endless(), steps_per_epoch=4, epochs=3, verbose=0))
    for a, b in zip(model.get_weights(), ref.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert not new_children(before)
