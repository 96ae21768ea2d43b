"""Gradient allreduce started during the backward, bucket by bucket.

The tape reports each variable's gradient as soon as it is final (in reverse layer order,
`GradientTape.on_gradient_ready`). The reducer copies it, weighted by this rank's share of
the batch, into its flat buffer; when every variable of a bucket (about
`FKERAS_DIST_BUCKET_MB` MB of consecutive variables, taken from the end) is in, a non-blocking
`Iallreduce` starts on that slice, and the pending ones are progressed at every later report
(MPI moves data only inside MPI calls). After the backward, `finish` waits for the rest and
returns the reduced gradients; the optimizer then skips its own allreduce for this step.

Used by the built-in train step only when a DataParallel job runs on MPI (without the sharded
update of ranks on one machine, sharded_update.py) and the gradients make at least two
buckets: with one bucket nothing is left to overlap and the per-gradient copies and MPI polls
only cost (measured: the MLP of bench_fit.py, 2.7 MB, ran 21% slower bucketed). The rule
depends only on the variables' sizes, so every rank and every run picks the same path.
`FKERAS_DIST_OVERLAP=1` forces bucketing, `0` turns it off. A custom train_step's
`optimizer.apply` reduces after the backward (one blocking allreduce), with the same result.
"""

import os

import numpy as np

from fkeras.distribution import _state

_cache = {}


def reducer_for(variables):
    """A GradientReducer for these variables, or None when overlap does not apply."""
    comm = _state.COMM
    mode = os.environ.get("FKERAS_DIST_OVERLAP", "auto")
    if comm is None or not hasattr(comm, "iallreduce_sum") or mode == "0":
        return None
    key = tuple(id(v) for v in variables)
    reducer = _cache.get(key)
    if reducer is None or reducer.comm is not comm:
        _cache.clear()  # one model trains at a time; do not keep old buffers alive
        reducer = _cache[key] = GradientReducer(comm, variables)
    if len(reducer.buckets) < 2 and mode != "1":
        return None  # one bucket: nothing to overlap (see the module doc)
    return reducer


class GradientReducer:
    """Buckets over one flat float32 buffer in the variables' order (see the module doc)."""

    def __init__(self, comm, variables):
        cap = float(os.environ.get("FKERAS_DIST_BUCKET_MB", "4")) * (1 << 20) / 4
        self.comm = comm
        self.shapes = [tuple(v.shape) for v in variables]
        sizes = [int(np.prod(s)) for s in self.shapes]
        self.offsets = np.cumsum([0] + sizes).tolist()
        self.flat = np.zeros(self.offsets[-1], np.float32)
        self.bucket_of, self.buckets = [0] * len(sizes), []
        members, total = [], 0
        for j in range(len(sizes) - 1, -1, -1):  # the backward reaches the last ones first
            members.append(j)
            total += sizes[j]
            if total >= cap or j == 0:
                self.buckets.append(members)
                for m in members:
                    self.bucket_of[m] = len(self.buckets) - 1
                members, total = [], 0

    def start(self, tape):
        """Arms `tape` for one backward."""
        self.missing = [len(b) for b in self.buckets]
        self.given = [False] * len(self.shapes)
        self.requests = []
        tape.on_gradient_ready = self.ready

    def ready(self, j, grad):
        lo, hi = self.offsets[j], self.offsets[j + 1]
        if grad is None:
            self.flat[lo:hi] = 0.0
        else:
            self.given[j] = True
            np.multiply(np.asarray(grad).reshape(-1), _state.GRAD_WEIGHT, out=self.flat[lo:hi])
        b = self.bucket_of[j]
        self.missing[b] -= 1
        if self.missing[b] == 0:
            members = self.buckets[b]
            start, stop = self.offsets[min(members)], self.offsets[max(members) + 1]
            self.requests.append(self.comm.iallreduce_sum(self.flat[start:stop]))
        if self.requests:
            self.comm.test_all(self.requests)

    def finish(self):
        """Waits for every bucket; returns the reduced gradients (None where a variable got
        none) and tells the optimizer that this step's gradients are already reduced."""
        self.comm.wait_all(self.requests)
        self.requests = []
        _state.PRE_REDUCED = bool(self.shapes)
        return [self.flat[self.offsets[j]:self.offsets[j + 1]].reshape(shape)
                if self.given[j] else None for j, shape in enumerate(self.shapes)]
