"""PyDataset: a Python dataset of batches indexed by position (Keras 3's `keras.utils.PyDataset`,
Keras 2's `Sequence`).

fit/evaluate/predict read `ds[i]` for every batch index, call `on_epoch_begin`/`on_epoch_end`
around each pass and, with `workers > 1`, fetch batches ahead in a thread pool, or with
`use_multiprocessing=True` in worker processes (at most `max_queue_size` ahead). How the
trainers read it is in `fkeras/trainers/py_dataset_adapter.py`.
"""


class PyDataset:
    """Base class for datasets of batches: implement `__len__` (or `num_batches`) and
    `__getitem__(index)`.

    `__getitem__` returns a batch: `(x,)`, `(x, y)` or `(x, y, sample_weight)` (a list is
    taken as a tuple), a bare array (inputs only), or a dict of inputs keyed by input name.

    Args:
        workers: number of threads (or processes) fetching batches ahead (1 without
            multiprocessing: read in the training thread).
        use_multiprocessing: whether the workers are processes (forked on Linux, so the
            dataset need not be picklable; spawned and pickled elsewhere). The batches must
            be picklable. Each pass over the data starts fresh workers after
            `on_epoch_end()`, so they see what it changed.
        max_queue_size: how many batches may be fetched ahead.

    Example:
    ```python
    class Batches(fkeras.utils.PyDataset):
        def __init__(self, x, y, batch_size, **kwargs):
            super().__init__(**kwargs)
            self.x, self.y, self.batch_size = x, y, batch_size

        def __len__(self):
            return -(-len(self.x) // self.batch_size)

        def __getitem__(self, i):
            s = slice(i * self.batch_size, (i + 1) * self.batch_size)
            return self.x[s], self.y[s]

    model.fit(Batches(x, y, 32), epochs=3)
    ```
    """

    def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10):
        self._workers = workers
        self._use_multiprocessing = use_multiprocessing
        self._max_queue_size = max_queue_size

    def _warn_if_super_not_called(self):
        if "_workers" not in self.__dict__:
            import warnings

            warnings.warn(
                "Your `PyDataset` class should call `super().__init__(**kwargs)` in its "
                "constructor. `**kwargs` can include `workers`, `use_multiprocessing`, "
                "`max_queue_size`. Do not pass these arguments to `fit()`, as they will be "
                "ignored.", stacklevel=3)

    @property
    def workers(self):
        return self.__dict__.get("_workers", 1)

    @workers.setter
    def workers(self, value):
        self._workers = value

    @property
    def use_multiprocessing(self):
        return self.__dict__.get("_use_multiprocessing", False)

    @use_multiprocessing.setter
    def use_multiprocessing(self, value):
        self._use_multiprocessing = value

    @property
    def max_queue_size(self):
        return self.__dict__.get("_max_queue_size", 10)

    @max_queue_size.setter
    def max_queue_size(self, value):
        self._max_queue_size = value

    def __getitem__(self, index):
        """The batch at position `index`."""
        raise NotImplementedError

    @property
    def num_batches(self):
        """The number of batches: `len(self)` by default; None for an infinite dataset."""
        if hasattr(self, "__len__"):
            return len(self)
        raise NotImplementedError(
            "You need to implement the `num_batches` property:\n\n"
            "@property\ndef num_batches(self):\n  return ...")

    def on_epoch_begin(self):
        """Called at the beginning of every pass over the data."""

    def on_epoch_end(self):
        """Called at the end of every pass over the data."""

    def __iter__(self):
        n = self.num_batches
        index = 0
        while n is None or index < n:
            yield self[index]
            index += 1
