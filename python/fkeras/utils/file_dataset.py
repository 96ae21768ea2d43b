"""FileDataset: what the `*_dataset_from_directory` loaders return (Keras returns a
`tf.data.Dataset`; fkeras needs no TensorFlow).

An iterable of batches that `fit`, `evaluate` and `predict` read like any iterable with a
length: each pass (`iter(ds)`) loads the files of each batch when it is reached, one batch at
a time. With `shuffle=True` every pass reads the samples in a fresh order drawn from a
generator seeded with `seed` (Keras's `tf.data` shuffle, a window of `8 * batch_size`, is
replaced by a full permutation: the order differs from TensorFlow's, the set of batches is
the same kind). It has `class_names` and `file_paths`, as Keras's datasets do.
"""

import itertools
import math

import numpy as np


class BatchIterable:
    """tf.data's most used chaining methods for fkeras's dataset objects: `take(n)`,
    `map(fn)` (a tuple element is unpacked into fn's arguments, as tf.data does) and
    `prefetch(n)` (a hint: batches are read when reached either way)."""

    def take(self, count):
        """The first `count` elements of each pass (all with -1)."""
        return _Derived(self, lambda it: it if count == -1 else itertools.islice(it, count),
                        None if count == -1 else min(count, len(self)))

    def map(self, map_func, num_parallel_calls=None, deterministic=None):
        """`map_func` applied to every element (`map_func(*element)` for a tuple)."""

        def apply(it):
            for item in it:
                yield map_func(*item) if isinstance(item, tuple) else map_func(item)

        return _Derived(self, apply, len(self))

    def prefetch(self, buffer_size=None):
        return self


class _Derived(BatchIterable):
    def __init__(self, parent, transform, length):
        self._parent, self._transform, self._length = parent, transform, length
        self.class_names = getattr(parent, "class_names", None)
        self.file_paths = getattr(parent, "file_paths", None)

    def __len__(self):
        return len(self._parent) if self._length is None else self._length

    def __iter__(self):
        return iter(self._transform(iter(self._parent)))


def encode_labels(labels, label_mode, num_classes):
    """int: int32 (n,); binary: float32 (n, 1); categorical: float32 one-hot (n, classes)."""
    labels = np.asarray(labels, dtype=np.int32)
    if label_mode == "binary":
        return labels.astype(np.float32)[:, None]
    if label_mode == "categorical":
        if labels.size and not 0 <= labels.min() <= labels.max() < num_classes:
            raise ValueError(
                f'label_mode="categorical" needs labels in [0, {num_classes}) (one per class '
                f"name); received labels from {labels.min()} to {labels.max()}.")
        return np.eye(num_classes, dtype=np.float32)[labels]
    return labels


class FileDataset(BatchIterable):
    """Batches `(load_batch(paths), labels)` (or `load_batch(paths)` without labels) over
    `file_paths`.

    Args:
        file_paths: the files, in the dataset's order.
        labels: encoded labels, one row per file, or None.
        load_batch: a function of a list of paths returning the batch's inputs.
        batch_size: samples per batch; None yields single samples.
        shuffle: whether each pass reads a fresh permutation.
        seed: the seed of the permutations (None: unseeded).
        class_names: the class names (None without labels).
    """

    def __init__(self, file_paths, labels, load_batch, batch_size, shuffle, seed,
                 class_names):
        self.file_paths = list(file_paths)
        self.class_names = class_names
        self.batch_size = batch_size
        self._labels = labels
        self._load_batch = load_batch
        self._shuffle = shuffle
        self._rng = np.random.default_rng(seed)

    def __len__(self):
        """The number of batches of a pass."""
        n = len(self.file_paths)
        return n if self.batch_size is None else math.ceil(n / self.batch_size)

    def cardinality(self):
        """The number of batches (tf.data's name)."""
        return len(self)

    def __iter__(self):
        n = len(self.file_paths)
        order = self._rng.permutation(n) if self._shuffle else np.arange(n)
        step = self.batch_size or 1
        for start in range(0, n, step):
            index = order[start:start + step]
            x = self._load_batch([self.file_paths[i] for i in index])
            y = None if self._labels is None else self._labels[index]
            if self.batch_size is None:
                x = x[0]
                y = None if y is None else y[0]
            yield x if y is None else (x, y)

    def __repr__(self):
        return (f"<FileDataset: {len(self.file_paths)} files, batch_size={self.batch_size}, "
                f"class_names={self.class_names}>")
