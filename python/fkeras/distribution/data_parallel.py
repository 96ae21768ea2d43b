"""What `fit`, `evaluate` and `predict` do under a `DataParallel` distribution.

Every function here is the identity (or returns at once) when no distribution over several
processes is active, so the loops call them unconditionally.

Semantics (Keras 3's DataParallel, on N processes):
- `batch_size` is the global batch; every rank reads the same global batches (the same
  shuffled order: the random generators are synchronized from rank 0) and keeps rows
  [r * m / N, (r + 1) * m / N) of each batch of m rows: disjoint shards that cover the data.
- Gradients: rank r's flat gradient is weighted by its share of the batch (local rows / m)
  and summed over ranks (the optimizer's hook, `_state.reduce_gradients`): the gradient of
  the global batch's mean loss, also for an uneven last batch. A training batch with fewer
  rows than ranks is skipped on every rank (a warning), so step counts stay equal.
- Metric states are summed over ranks before the epoch's (and evaluate's) results are read:
  every rank logs the global figures, so callbacks decide the same on every rank. Batch-level
  logs (the progress bar's running figures within an epoch) are each rank's own: reducing them
  would cost a collective per batch. Metric states are summed as increments from their
  initial values: right for Keras's metrics (totals, counts, confusion counts), not for a
  custom state that keeps a maximum.
- `predict` gathers the shards of every batch in order on every rank.
"""

import warnings

import numpy as np

from fkeras.distribution import _state
from fkeras.distribution import comm as _comm
from fkeras.distribution import distribution_lib as _lib


def active():
    """The communicator when data-parallel over several processes, else None."""
    return _state.COMM


def _auto_shard():
    dist = _lib.distribution()
    return dist is None or dist.auto_shard_dataset


def check_batch_size(batch_size, what="batch_size"):
    """The global batch must split evenly into one equal part per process."""
    comm = _state.COMM
    if comm is None or batch_size is None or not _auto_shard():
        return
    if batch_size % comm.size:
        raise ValueError(
            f"DataParallel: `{what}={batch_size}` is the global batch and must be divisible "
            f"by the number of processes ({comm.size}), each of which computes "
            f"`{what} / {comm.size}` rows per step. Received: {what}={batch_size}")


def _rows(m, rank, size):
    return m * rank // size, m * (rank + 1) // size


def _cut(lst, lo, hi):
    return None if lst is None else [None if a is None else a[lo:hi] for a in lst]


def shard(steps, training):
    """This rank's part of each (step, (xs, ys, sws)) of an epoch.

    training=True: sets the step's gradient weight and skips (on every rank) a batch with
    fewer rows than processes. training=False: a rank whose part is empty gets `None`.
    """
    comm = _state.COMM
    if comm is None:
        return steps  # one process: the batches themselves, no generator in between
    if not _auto_shard():
        _state.GRAD_WEIGHT = 1.0 / comm.size
        return steps
    return _sharded(steps, training, comm)


def _sharded(steps, training, comm):
    try:
        yield from _shard(steps, training, comm)
    finally:  # train_on_batch and custom loops: every rank's batch weighs the same
        _state.GRAD_WEIGHT = 1.0 / comm.size


def _shard(steps, training, comm):
    for step, (xs, ys, sws) in steps:
        m = len(xs[0]) if xs and np.ndim(xs[0]) else 1
        lo, hi = _rows(m, comm.rank, comm.size)
        if training:
            if m < comm.size:
                warnings.warn(f"DataParallel: skipping a training batch of {m} rows, fewer "
                              f"than the {comm.size} processes.", stacklevel=2)
                continue
            _state.GRAD_WEIGHT = (hi - lo) / m
        elif hi == lo:
            yield step, None
            continue
        yield step, (_cut(xs, lo, hi), _cut(ys, lo, hi), _cut(sws, lo, hi))


def reduce_metrics(metrics):
    """Sums every metric state over ranks (as increments from its initial value), so each
    rank's `result()` is the global figure. One allreduce for all states."""
    comm = _state.COMM
    if comm is None:
        return
    states = [(value, initial) for m in _leaf_metrics(metrics)
              for _, value, initial in getattr(m, "_state", ())]
    if not states:
        return
    flat, split = _comm.as_float_buffer([v - i for v, i in states])
    comm.allreduce_sum(flat)
    for (value, initial), total in zip(states, split(flat)):
        value[...] = initial + total


def _leaf_metrics(metrics):
    """Metrics with state: containers (the compiled metrics) are expanded to their metrics."""
    out = []
    for m in metrics:
        inner = m.metrics if getattr(m, "_fk_is_compile_metrics", False) else None
        out.extend(_leaf_metrics(inner) if inner else [m])
    return out


def reduce_logs(logs):
    """The mean over ranks of each numeric entry of a custom step's logs (same on all ranks)."""
    comm = _state.COMM
    if comm is None or not logs:
        return logs
    gathered = comm.allgather(logs)
    out = dict(logs)
    for k, v in logs.items():
        try:
            out[k] = (np.mean([np.asarray(g[k], dtype=np.float64) for g in gathered],
                              axis=0)).tolist()
        except (KeyError, TypeError, ValueError):
            pass
    return out


def gather_predictions(per_batch):
    """Every rank's per-batch outputs (lists of arrays, or None for an empty part) merged
    batch by batch in rank order; the same list on every rank."""
    comm = _state.COMM
    if comm is None or not _auto_shard():
        return [b for b in per_batch if b is not None]
    gathered = comm.allgather(per_batch)
    merged = []
    for b in range(len(per_batch)):
        parts = [g[b] for g in gathered if g[b] is not None]
        merged.append([np.concatenate([p[i] for p in parts], axis=0)
                       for i in range(len(parts[0]))])
    return merged


def _signature(model, batch_size, steps):
    # Shapes, not names: automatic names depend on what else each process has built.
    weights = [tuple(w.shape) for w in model.weights]
    return {"weight shapes": weights, "batch_size": batch_size, "steps": steps,
            "optimizer": type(model.optimizer).__name__ if model.optimizer else None}


def start_fit(model, state, batches):
    """At fit start: builds a subclassed model not built yet (one inference call on a row),
    refuses a job whose ranks differ in model or batch size, synchronizes the random
    generators and broadcasts the weights from rank 0."""
    comm = _state.COMM
    if comm is None:
        return
    data = batches.data
    if state.needs_build and getattr(data, "xs", None) and getattr(data, "n", 0):
        state.build_with([a[:1] for a in data.xs])
        if not model.optimizer.built:
            model.optimizer.build(state.variables)
    mine = _signature(model, batches.batch_size, batches.target)
    for r, other in enumerate(comm.allgather(mine)):
        if other != mine:
            diff = [k for k in mine if mine[k] != other[k]]
            raise ValueError(
                f"DataParallel: rank {comm.rank} and rank {r} call fit with different "
                f"{', '.join(diff)}: every process must build the same model and pass the "
                f"same batch size and data. Rank {comm.rank}: "
                f"{ {k: mine[k] for k in diff} }; rank {r}: { {k: other[k] for k in diff} }")
    from fkeras.utils import random as _random

    rng_state = comm.broadcast(_random.global_rng().bit_generator.state)
    _random.global_rng().bit_generator.state = rng_state
    if not state.needs_build:
        broadcast_weights(model)


def broadcast_weights(model):
    """Every weight of `model` (and the optimizer's state once built) set to rank 0's."""
    comm = _state.COMM
    if comm is None:
        return
    optimizer = getattr(model, "optimizer", None)
    # Weights in an optimizer's shared buffers are one copy for the ranks of this machine.
    shared = getattr(optimizer, "_where", {}) if getattr(optimizer, "_fk_sharded", None) \
        else {}
    for w in model.weights:
        if id(w) in shared:
            continue
        value = w._value
        if isinstance(value, np.ndarray) and value.flags.c_contiguous:
            comm.broadcast_array(value)
        else:
            w.assign(comm.broadcast_array(np.ascontiguousarray(np.asarray(value))))
    if shared:
        return  # the slots are one shared copy for every rank (sharded_update.py)
    for g in getattr(optimizer, "_groups", None) or []:
        for buf in g.slots.values():
            comm.broadcast_array(buf)


def overlap_allreduce(tape, variables, optimizer=None):
    """Arms `tape` so that the gradients are allreduced bucket by bucket during its backward
    (see bucketing.py); returns the reducer (call `finish()` after the backward) or None
    (also when `optimizer` sums the gradients in shared memory: sharded_update.py)."""
    if _state.COMM is None:
        return None
    from fkeras.distribution import bucketing, sharded_update

    if sharded_update.wanted(optimizer):
        return None

    reducer = bucketing.reducer_for(variables)
    if reducer is not None:
        reducer.start(tape)
    return reducer


def is_writer():
    """Whether this rank prints progress and writes files (rank 0, or no distribution)."""
    comm = _state.COMM
    return comm is None or comm.rank == 0
