"""`timeseries_dataset_from_array` (Keras 3.15's arguments): sliding windows over an array as
a dataset of batches, built one batch at a time when it is read."""

import math

import numpy as np

from fkeras.utils.file_dataset import BatchIterable


def _check(data, sequence_stride, sampling_rate, start_index, end_index, format):
    n = len(data)
    if start_index:
        if start_index < 0:
            raise ValueError("`start_index` must be 0 or greater. Received: "
                             f"start_index={start_index}")
        if start_index >= n:
            raise ValueError("`start_index` must be lower than the length of the data. "
                             f"Received: start_index={start_index}, for data of length {n}")
    if end_index:
        if start_index and end_index <= start_index:
            raise ValueError("`end_index` must be higher than `start_index`. Received: "
                             f"start_index={start_index}, and end_index={end_index} ")
        if end_index >= n:
            raise ValueError("`end_index` must be lower than the length of the data. "
                             f"Received: end_index={end_index}, for data of length {n}")
        if end_index <= 0:
            raise ValueError(f"`end_index` must be higher than 0. Received: "
                             f"end_index={end_index}")
    for name, value in (("sampling_rate", sampling_rate), ("sequence_stride", sequence_stride)):
        if value <= 0:
            raise ValueError(f"`{name}` must be higher than 0. Received: {name}={value}")
        if value >= n:
            raise ValueError(f"`{name}` must be lower than the length of the data. Received: "
                             f"{name}={value}, for data of length {n}")
    if format not in ("tf", "grain"):
        raise ValueError(f'`format` should be either "tf" or "grain". Received: '
                         f"format={format}")


class TimeseriesDataset(BatchIterable):
    """Batches of windows `data[start + p + arange(sequence_length) * sampling_rate]` (and
    `targets[start + p]`) for the start positions p, in order or shuffled."""

    def __init__(self, data, targets, positions, sequence_length, sampling_rate, batch_size,
                 shuffle, seed):
        self._data, self._targets, self.positions = data, targets, positions
        self._offsets = np.arange(sequence_length) * sampling_rate
        self.batch_size = batch_size
        self._shuffle = shuffle
        self._rng = np.random.default_rng(seed)
        self._passes = 0

    def __len__(self):
        n = len(self.positions)
        return n if self.batch_size is None else math.ceil(n / self.batch_size)

    def cardinality(self):
        return len(self)

    def __iter__(self):
        positions = self.positions
        if self._shuffle and self._passes:  # a fresh order for every later pass
            positions = positions[self._rng.permutation(len(positions))]
        self._passes += 1
        step = self.batch_size or 1
        for start in range(0, len(positions), step):
            p = positions[start:start + step]
            x = self._data[p[:, None] + self._offsets]
            y = None if self._targets is None else self._targets[p]
            if self.batch_size is None:
                x, y = x[0], None if y is None else y[0]
            yield x if y is None else (x, y)


def timeseries_dataset_from_array(data, targets, sequence_length, sequence_stride=1,
                                  sampling_rate=1, batch_size=128, shuffle=False, seed=None,
                                  start_index=None, end_index=None, format="tf"):
    """Creates a dataset of sliding windows over a timeseries (Keras's function).

    Window i starts at `start_index + p_i`, p_i = 0, `sequence_stride`, ...; it holds
    `sequence_length` steps `sampling_rate` apart; its target is `targets[start_index + p_i]`.

    Args:
        data: an array of timesteps (axis 0 is time).
        targets: an array of targets (one per timestep) or None.
        sequence_length: steps per window.
        sequence_stride: steps between the starts of two windows.
        sampling_rate: steps between two samples of a window.
        batch_size: windows per batch (None: single windows).
        shuffle: shuffle the windows (by `np.random.RandomState(seed)`, as Keras; later
            passes draw fresh orders).
        seed: the shuffle seed.
        start_index, end_index: the part of `data` used (`end_index` excluded).
        format: `"tf"` or `"grain"`, accepted for Keras's code.

    Returns:
        An iterable of `(windows, targets)` (or `windows`) batches with a length.

    Example:
    ```python
    ds = fkeras.utils.timeseries_dataset_from_array(x[:-10], x[10:], sequence_length=10)
    ```
    """
    _check(data, sequence_stride, sampling_rate, start_index, end_index, format)
    start_index = 0 if start_index is None else start_index
    end_index = len(data) if end_index is None else end_index
    count = end_index - start_index - (sequence_length - 1) * sampling_rate
    if targets is not None:
        count = min(count, len(targets))
    positions = np.arange(0, max(count, 0), sequence_stride)
    if shuffle:
        if seed is None:
            seed = np.random.randint(1e6)
        np.random.RandomState(seed).shuffle(positions)
    data = np.asarray(data)[start_index:end_index]
    if targets is not None:
        targets = np.asarray(targets)[start_index:]
    return TimeseriesDataset(data, targets, positions, sequence_length, sampling_rate,
                             batch_size, shuffle, seed)
