"""Keras 3's approximate quantile summary (Discretization.adapt), recomputed step for step so
that fkeras finds the same bin boundaries as Keras for the same batches.

A summary is a (2, k) float32 array: sorted sample values and the weight (count) each stands
for. A batch is summarized by taking every `step`-th sorted value, step = max(n / (1 /
epsilon), 1), each weighing `step`. Summaries merge by concatenation (the new one first) and a
sort on the values; a summary longer than 1 / epsilon entries is compressed by interpolating
values and cumulative weights at the quantiles epsilon, 2 epsilon, ..., 1. The boundaries
of `num_bins` bins are the compression at 1 / num_bins without its last value.
"""

import numpy as np


def empty():
    return np.zeros((2, 0), dtype=np.float32)


def summarize(values, epsilon):
    ordered = np.sort(np.reshape(values, [-1]))
    step = max(ordered.size / (1.0 / epsilon), 1)
    picked = ordered[int(step - 1)::int(step)]
    return np.stack([picked, np.ones_like(picked) * step])


def merge(new, old, epsilon):
    both = np.concatenate((new, old), axis=1)
    return compress(np.take(both, np.argsort(both[0]), axis=1), epsilon)


def compress(summary, epsilon):
    if summary.shape[1] * epsilon < 1:
        return summary
    quantiles = epsilon + np.arange(0.0, 1.0, epsilon)
    cumulative = summary[1].cumsum()
    fractions = cumulative / cumulative[-1]
    values = np.interp(quantiles, fractions, summary[0])
    totals = np.interp(quantiles, fractions, cumulative)
    weights = np.diff(totals, prepend=0.0)
    return np.stack((values, weights)).astype(np.float32)


def bin_boundaries(summary, num_bins):
    return compress(summary, 1.0 / num_bins)[0, :-1]
