"""How fit/evaluate/predict read a PyDataset (or a `__len__` + `__getitem__` sequence) and a
Python generator: Keras 3's epoch semantics.

PyDataset (n = num_batches):
- fit/evaluate start with `reset()`: the dataset's `on_epoch_end()` runs once before the
  first epoch; the first fit/evaluate after `compile` also reads one batch first (Keras builds
  the compiled state from it: on_epoch_begin, one `ds[i]`, then that on_epoch_end).
- each epoch: `on_epoch_begin()`, the batches, `on_epoch_end()`. fit with `shuffle=True` reads
  a fresh permutation of the indices each pass; evaluate/predict read them in order.
- `steps_per_epoch < n`: the pass continues over epochs (0,1,2 | 3,4 then a "ran out of data"
  warning | 0,1,2); `steps_per_epoch > n`: every epoch stops after n batches with the warning.
- `workers > 1`: a thread pool fetches up to `max_queue_size` batches ahead, in order; an
  error in `__getitem__` is raised in the training thread with its own type; the pool is shut
  down when the pass ends, fails or is abandoned, and every wait polls (no unbounded block).
- `use_multiprocessing=True` (and `workers >= 1`): the same with worker processes, one pool
  per pass started after the previous `on_epoch_end()` (`worker_processes.py`).

Generator: read continuously across epochs; without `steps_per_epoch` an epoch lasts until it
is exhausted; running out warns and fit goes on with the next epoch (which gets nothing).
"""

import collections
import itertools
import warnings

import numpy as np

from fkeras.utils import random as _random
from fkeras.utils.py_dataset import PyDataset

_POLL_S = 0.1


def is_py_dataset(x):
    """A PyDataset, or a Keras 2 `Sequence`-style object (`__len__` and `__getitem__`) that is
    not array data."""
    if isinstance(x, PyDataset):
        return True
    if isinstance(x, (np.ndarray, list, tuple, dict, str, bytes)) or hasattr(x, "__array__"):
        return False
    cls = type(x)
    return hasattr(cls, "__getitem__") and hasattr(cls, "__len__")


def is_generator(x):
    """A Python generator or any one-pass iterator (has `__next__`)."""
    return hasattr(x, "__next__") and hasattr(x, "__iter__")


def ran_out_of_data_warning():
    warnings.warn(
        "Your input ran out of data; interrupting training. Make sure that your dataset or "
        "generator can generate at least `steps_per_epoch * epochs` batches. You may need to "
        "use the `.repeat()` function when building your dataset.", stacklevel=4)


def standardize_batch(batch, class_weight=None):
    """A batch as a tuple (x,), (x, y), (x, y, sw) or an inputs dict (Keras's rules)."""
    if isinstance(batch, dict):
        return batch
    if isinstance(batch, np.ndarray):
        batch = (batch,)
    if isinstance(batch, list):
        batch = tuple(batch)
    if not isinstance(batch, tuple) or len(batch) not in (1, 2, 3):
        raise ValueError(
            "PyDataset.__getitem__() must return a tuple or a dict. If a tuple, it must be "
            "ordered either (input,) or (inputs, targets) or (inputs, targets, "
            f"sample_weights). Received: {str(batch)[:100]}... of type {type(batch)}")
    if class_weight is not None:
        from fkeras.trainers import data_adapter as da

        if len(batch) == 3:
            raise ValueError("You cannot specify `class_weight` and `sample_weight` at the "
                             "same time.")
        if len(batch) == 2:
            batch = batch + (da.class_weights_to_sample_weight(da.to_array(batch[1]),
                                                               class_weight),)
    return batch


class _Prefetcher:
    """Batches `dataset[i]` for `indices`, in order, computed by `workers` threads (or worker
    processes with `processes=True`) at most `depth` ahead. `close()` cancels what is pending
    and releases the workers."""

    def __init__(self, dataset, indices, workers, depth, processes=False):
        from concurrent import futures  # imported on first use (~25 ms)

        self._timeout = futures.TimeoutError  # not the builtin one before Python 3.11
        self._indices = iter(indices)
        self._depth = max(1, int(depth or 1))
        self._processes = processes
        if processes:
            from fkeras.trainers import worker_processes  # multiprocessing, on first use

            self._workers = worker_processes
            self._pool = worker_processes.start(dataset, workers)
        else:
            self._pool = futures.ThreadPoolExecutor(max_workers=int(workers),
                                                    thread_name_prefix="fkeras_pydataset")
            self._fetch = dataset.__getitem__
        self._pending = collections.deque()
        while len(self._pending) < self._depth and self._submit():
            pass

    def _submit(self):
        index = next(self._indices, None)
        if index is None:
            return False
        if self._processes:
            self._pending.append(self._workers.submit(self._pool, index))
        else:
            self._pending.append(self._pool.submit(self._fetch, index))
        return True

    def __iter__(self):
        return self

    def __next__(self):
        if not self._pending:
            raise StopIteration
        future = self._pending.popleft()
        self._submit()
        while True:
            try:
                return future.result(timeout=_POLL_S)
            except self._timeout:
                continue

    def close(self):
        for future in self._pending:
            future.cancel()
        self._pending.clear()
        if self._processes:
            self._workers.stop(self._pool)
        else:
            self._pool.shutdown(wait=False, cancel_futures=True)


class PyDatasetAdapter:
    """Reads a PyDataset with Keras 3's epoch semantics (see the module docstring)."""

    def __init__(self, dataset, class_weight=None):
        if isinstance(dataset, PyDataset):
            dataset._warn_if_super_not_called()
        self.dataset = dataset
        self.class_weight = class_weight
        self._it = None  # the current pass, kept across epochs with steps_per_epoch
        self._seen = 0
        self._prefetcher = None

    @property
    def num_batches(self):
        ds = self.dataset
        return ds.num_batches if isinstance(ds, PyDataset) else len(ds)

    def _hook(self, name):
        fn = getattr(self.dataset, name, None)
        if callable(fn):
            fn()

    def _close_pass(self):
        if self._prefetcher is not None:
            self._prefetcher.close()
            self._prefetcher = None
        self._it = None

    def _new_pass(self, shuffle):
        self._close_pass()
        n = self.num_batches
        if n is None:
            indices = itertools.count()
        elif shuffle:
            indices = iter(_random.global_rng().permutation(n).tolist())
        else:
            indices = iter(range(n))
        workers = getattr(self.dataset, "workers", 1) or 0
        processes = bool(getattr(self.dataset, "use_multiprocessing", False))
        if workers > 1 or (workers > 0 and processes):  # Keras 3's condition
            self._prefetcher = _Prefetcher(self.dataset, indices, workers,
                                           getattr(self.dataset, "max_queue_size", 10),
                                           processes)
            source = self._prefetcher
        else:
            source = (self.dataset[i] for i in indices)
        self._it = (standardize_batch(b, self.class_weight) for b in source)
        self._seen = 0

    def close(self):
        """After fit/evaluate/predict: ends a pass left open by `steps`."""
        self._close_pass()

    def reset(self):
        """Before fit/evaluate reads its first epoch: a fresh pass, and `on_epoch_end()`."""
        self._close_pass()
        self._hook("on_epoch_end")

    def prime(self, shuffle=False):
        """The read Keras does to build the compiled state: one batch of a new pass (an
        infinite dataset too)."""
        if self.num_batches is None:
            self._close_pass()
            it = self.epoch(1, shuffle)
        else:
            it = self.epoch(None, shuffle)
        try:
            next(it, None)
        finally:
            it.close()

    def epoch(self, steps, shuffle=False):
        """Yields (step, batch) for one epoch of at most `steps` batches (all of a pass when
        None); the dataset's hooks around it."""
        self._hook("on_epoch_begin")
        n = self.num_batches
        limit = steps or n
        if limit is None:
            raise ValueError("The PyDataset has no length (`num_batches` is None): pass "
                             "`steps_per_epoch` (fit) or `steps` (evaluate/predict).")
        if limit > 0:
            if self._it is None or steps is None:
                self._new_pass(shuffle)
            try:
                for step in range(limit):
                    if n is not None and self._seen >= n:
                        if steps:
                            ran_out_of_data_warning()
                        break
                    batch = next(self._it)
                    self._seen += 1
                    yield step, batch
            except BaseException:  # an error in a batch, or the epoch abandoned
                self._close_pass()
                raise
            if n is not None and self._seen >= n:
                self._close_pass()
        else:  # an empty dataset: Keras finds it out of data every epoch
            ran_out_of_data_warning()
        self._hook("on_epoch_end")


class GeneratorAdapter:
    """Reads a Python generator (one pass, shared by every epoch)."""

    num_batches = None

    def __init__(self, generator):
        self.generator = generator
        self._it = None

    def reset(self):
        """A generator cannot restart: the pass goes on where it is."""

    def prime(self, shuffle=False):
        """Nothing to read ahead: the batches of a generator are kept for the epochs."""

    def epoch(self, steps, shuffle=False):
        if self._it is None:
            self._it = iter(self.generator)
        for step in (range(steps) if steps is not None else itertools.count()):
            try:
                batch = next(self._it)
            except StopIteration:
                ran_out_of_data_warning()
                return
            yield step, batch


ADAPTERS = (PyDatasetAdapter, GeneratorAdapter)


def _compiled_state_unbuilt(model):
    """Whether Keras would build the compiled state from a first batch (it reads one)."""
    cm, cl = model.compiled_metrics, model.compiled_loss
    return (not model.built or (cm is not None and bool(cm._metrics_spec or cm._weighted_spec)
                                and not cm.built)
            or (cl is not None and not cl._called))


def start_epochs(model, data, shuffle, steps, training):
    """Before fit/evaluate reads a PyDataset or generator: Keras's warnings, its priming
    read and `on_epoch_end()`. Returns the shuffle to use."""
    if isinstance(data, GeneratorAdapter):
        if training and shuffle:
            warnings.warn(
                "`shuffle=True` was passed, but will be ignored since the data `x` was "
                "provided as a generator. The generator is expected to yield already-shuffled "
                "data.", stacklevel=4)
        return False
    if data.num_batches is None:
        if steps is None:
            raise ValueError(
                "The PyDataset has no length (`num_batches` is None): pass `steps_per_epoch` "
                "to fit (`steps` to evaluate/predict), or it would never end.")
        if training and shuffle:
            warnings.warn(
                "`shuffle=True` was passed, but will be ignored since the data `x` was "
                "provided as an infinite PyDataset. The PyDataset is expected to already be "
                "shuffled.", stacklevel=4)
        shuffle = False
    if _compiled_state_unbuilt(model):
        data.prime(bool(shuffle) and training)
    data.reset()
    return shuffle if training else False
