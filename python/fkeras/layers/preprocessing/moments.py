"""StreamingMoments: mean and (biased) variance over some axes, batch by batch, in float64.

Each batch's count, mean and sum of squared deviations M2 are merged into the running ones
with Chan, Golub and LeVeque's pairwise update (mean += delta * n_b / n;
M2 += M2_b + delta^2 * n_a * n_b / n), which equals the statistics of the concatenated data
up to float64 rounding, whatever the batch sizes.
"""

import numpy as np


class StreamingMoments:
    """Running mean/variance of arrays reduced over `axes` (the other axes are kept)."""

    def __init__(self, axes):
        self.axes = tuple(axes)
        self.count = 0
        self._mean = None
        self._m2 = None

    def update(self, batch):
        batch = np.asarray(batch, dtype=np.float64)
        n_b = int(np.prod([batch.shape[a] for a in self.axes], dtype=np.int64))
        if n_b == 0:
            return
        mean_b = batch.mean(axis=self.axes)
        m2_b = ((batch - np.expand_dims(mean_b, self.axes) if self.axes else batch - mean_b)
                ** 2).sum(axis=self.axes)
        if self._mean is None:
            self.count, self._mean, self._m2 = n_b, mean_b, m2_b
            return
        n = self.count + n_b
        delta = mean_b - self._mean
        self._mean = self._mean + delta * (n_b / n)
        self._m2 = self._m2 + m2_b + delta ** 2 * (self.count * n_b / n)
        self.count = n

    @property
    def mean(self):
        if self._mean is None:
            raise ValueError("No data: every batch given to adapt() was empty.")
        return self._mean

    @property
    def variance(self):
        if self._m2 is None:
            raise ValueError("No data: every batch given to adapt() was empty.")
        return self._m2 / self.count
