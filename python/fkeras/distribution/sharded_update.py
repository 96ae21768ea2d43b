"""The optimizer step of ranks on one machine: gradients summed in shared memory, each rank
updating its 1/N slice of the flat buffers (a sharded update).

When every rank of a DataParallel job runs on the same machine and the optimizer's update is
elementwise (SGD, Adam, AdamW, Adamax, Adagrad, Adadelta, RMSprop, Nadam, Lion, Ftrl, without
clipnorm / global_clipnorm / EMA / gradient accumulation / constraints), the ranks map one
shared-memory block (a file in /dev/shm, unlinked once every rank has mapped it) holding, per
optimizer group of n elements:
- one gradient region of n per rank: the optimizer's flat gradient buffer (`group.grad`) is
  this rank's region, so gathering the gradients writes them there;
- the packed trainable parameters (`group.param`, which the variables' values view) and the
  slots (momentum, velocity, ...): one copy for the whole machine. Every rank reads them in
  full (`model.weights`, `optimizer.variables` and checkpoints see the whole, current state
  on every rank); a step writes each slice from one rank only.
A step (`ShardedUpdate.apply`): each rank writes its share of the batch (the gradient
weight) to shared memory; barrier; rank r sums the ranks' gradients on its slice r (rank
order fixed: deterministic), scales by the weights and runs the optimizer's fused kernel on
slice r of the shared parameters and slots; barrier (no rank starts its next forward before
every slice is updated). The gradient bytes move once, without MPI's bounce buffers, no
parameter is copied between ranks, and each rank runs 1/N of the optimizer's work.
The trainable parameters being one copy is DataParallel's invariant made physical: a write
to them on one rank (`set_weights`, `load_weights`) is seen by the other ranks of the machine,
which hold the same values by construction (`load_weights` and fit's start broadcast rank 0's
anyway). Non-trainable weights (batch-norm statistics) stay private. When the distribution is
turned off (`set_distribution(None)`), every buffer becomes private again at once.

`FKERAS_DIST_SHARDED=0` turns this off (MPI allreduce of the gradients, then the whole update
on every rank). Ranks on several machines use the MPI path, as do ranks whose shared-memory
directory (`FKERAS_DIST_SHM_DIR`, default /dev/shm) cannot hold the block (its pages are
reserved when it is created).
"""

import mmap
import os
import tempfile
import weakref

import numpy as np

from fkeras.distribution import _state

_ALIGN = 64  # bytes: every region (and every slice bound) starts on its own cache line


def _elementwise_updates():
    from fkeras import optimizers as o

    classes = ("SGD", "Adam", "AdamW", "Adamax", "Adagrad", "Adadelta", "RMSprop", "Nadam",
               "Lion", "Ftrl")
    return {getattr(o, name)._update for name in classes if hasattr(o, name)}


_ELEMENTWISE = None


def eligible(optimizer):
    """Whether `optimizer`'s update can run slice by slice (the same answer on every rank)."""
    global _ELEMENTWISE
    if _ELEMENTWISE is None:
        _ELEMENTWISE = _elementwise_updates()
    return bool(
        getattr(type(optimizer), "_update", None) in _ELEMENTWISE and optimizer.built
        and optimizer._groups and not (
            optimizer.clipnorm or optimizer.global_clipnorm or optimizer.use_ema
            or optimizer.gradient_accumulation_steps or optimizer._constrained)
        and all(isinstance(g.param, np.ndarray) and g.param.flags.c_contiguous
                for g in optimizer._groups))  # host memory (not a GPU group)


def wanted(optimizer):
    """Whether the DataParallel step of `optimizer` goes (or will go) through a
    ShardedUpdate: then the gradients are not allreduced during the backward."""
    comm = _state.COMM
    optimizer = getattr(optimizer, "inner_optimizer", optimizer)  # LossScaleOptimizer
    if comm is None or optimizer is None:
        return False
    current = optimizer.__dict__.get("_fk_sharded")
    if current is not None and current.comm is comm:
        return bool(current) and eligible(optimizer)
    return _enabled(comm) and eligible(optimizer)


def _enabled(comm):
    if os.environ.get("FKERAS_DIST_SHARDED", "1") == "0" or not hasattr(comm, "local_size"):
        return False
    local = getattr(comm, "_fk_local_size", None)
    if local is None:
        local = comm._fk_local_size = comm.local_size()
    return local == comm.size


def for_step(optimizer):
    """The ShardedUpdate `optimizer` uses in this step, attaching it on first use (a
    collective: every rank calls it at the same step); None for the MPI path. Detaches (back
    to private buffers) when the distribution is off or the optimizer no longer qualifies."""
    comm = _state.COMM
    current = optimizer.__dict__.get("_fk_sharded")
    if current is not None and (comm is None or current.comm is not comm):
        if current:
            current.detach(optimizer)
        optimizer._fk_sharded = current = None
    if comm is None:
        return None
    if current is None:
        ok = _enabled(comm) and eligible(optimizer)
        if not all(comm.allgather(ok)):
            optimizer._fk_sharded = _Off(comm)
            return None
        current = ShardedUpdate.create(comm, optimizer)
        optimizer._fk_sharded = current if current is not None else _Off(comm)
        return current
    if not current:
        return None
    if not eligible(optimizer):  # e.g. clipnorm set between steps: the same on every rank
        current.detach(optimizer)
        optimizer._fk_sharded = _Off(comm)
        return None
    return current


def detach(optimizer):
    """Back to private buffers (the values kept), e.g. before the distribution changes."""
    current = optimizer.__dict__.get("_fk_sharded")
    if current:
        current.detach(optimizer)
    optimizer.__dict__.pop("_fk_sharded", None)


class _Off:
    """The decision "MPI path" for one communicator (falsy)."""

    def __init__(self, comm):
        self.comm = comm

    def __bool__(self):
        return False


def _shared_block(comm, nbytes):
    """A memory block mapped by every rank (None on every rank when any rank cannot)."""
    path = None
    if comm.rank == 0:
        try:
            fd, path = tempfile.mkstemp(prefix="fkeras-dp-", dir=os.environ.get(
                "FKERAS_DIST_SHM_DIR", "/dev/shm"))
            try:
                # Reserve the pages now: a sparse file on a full /dev/shm (containers often
                # give it 64 MB) would fail later with SIGBUS on first touch instead.
                os.posix_fallocate(fd, 0, nbytes)
            finally:
                os.close(fd)
        except OSError:
            if path is not None:
                try:
                    os.unlink(path)
                except OSError:
                    pass
            path = None
    path = comm.broadcast(path)
    if path is None:
        return None
    block = None
    try:
        fd = os.open(path, os.O_RDWR)
        try:
            block = mmap.mmap(fd, nbytes)
        finally:
            os.close(fd)
    except (OSError, ValueError):
        block = None
    mapped = comm.allgather(block is not None)  # also: every rank has opened the file
    if comm.rank == 0:
        try:
            os.unlink(path)
        except OSError:
            pass
    return block if all(mapped) else None


class _Slice:
    """One rank's slice of a group: the attributes `Optimizer._update` reads."""

    def __init__(self, group, lo, hi):
        self.dev = group.dev
        self.param = group.param[lo:hi]
        self.slots = {name: buf[lo:hi] for name, buf in group.slots.items()}
        self.grad = group.grad[lo:hi]
        self.n = hi - lo


class _GroupShards:
    """The shared regions of one optimizer group and every rank's slice bounds."""

    def __init__(self, group, grads, slots, param, bounds, rank):
        self.group, self.grads, self.slots, self.param = group, grads, slots, param
        self.bounds = bounds
        self.own = None


def _rehome(group, param, grad, slots):
    """Moves a group's buffers (values already in the new ones); the variables' values
    become views of the new parameter buffer."""
    group.param, group.grad, group.slots = param, grad, dict(slots)
    for v, off, size in zip(group.variables, group.offsets, group.sizes):
        v._value = param[off:off + size].reshape(v.shape)


_ATTACHED = weakref.WeakSet()  # optimizers whose buffers are shared now


def detach_all(keep=None):
    """Every optimizer not attached on communicator `keep` back to private buffers (called
    when the distribution changes)."""
    for optimizer in list(_ATTACHED):
        current = optimizer.__dict__.get("_fk_sharded")
        if not current or current.comm is not keep:
            detach(optimizer)


def _bounds(n, size, itemsize):
    step = max(1, _ALIGN // itemsize)
    cuts = [min(n, (n * k // size) // step * step) for k in range(size)] + [n]
    return [(cuts[k], cuts[k + 1]) for k in range(size)]


class ShardedUpdate:
    """The shared buffers of one optimizer on one communicator (see the module doc)."""

    @classmethod
    def create(cls, comm, optimizer):
        """Maps the shared block and moves the optimizer's buffers into it (rank 0's
        parameter and slot values); None on every rank when shared memory is not available."""
        size = comm.size
        layout, total = [], _ALIGN * size  # the ranks' gradient weights (float64) first

        def region(nbytes):
            nonlocal total
            start = total
            total += -(-nbytes // _ALIGN) * _ALIGN
            return start

        for g in optimizer._groups:
            nbytes = g.n * g.param.itemsize
            layout.append(([region(nbytes) for _ in range(size)],
                           {name: region(nbytes) for name in g.slots}, region(nbytes)))
        # (per group: the ranks' gradients, the slots, the parameters)
        block = _shared_block(comm, max(total, 1))
        if block is None:
            return None
        self = cls()
        self.comm, self.block = comm, block
        self.weights = np.frombuffer(block, np.float64, size, 0)
        self.groups = []
        for g, (grad_at, slot_at, param_at) in zip(optimizer._groups, layout):
            dtype, n = g.param.dtype, g.n

            def view(at, dtype=dtype, n=n):
                return np.frombuffer(block, dtype, n, at)

            grads = [view(at) for at in grad_at]
            slots = {name: view(at) for name, at in slot_at.items()}
            param = view(param_at)
            if comm.rank == 0:  # rank 0's state, as the broadcasts at fit's start
                param[...] = g.param
                for name, buf in slots.items():
                    buf[...] = g.slots[name]
            grads[comm.rank][...] = g.grad  # this step's gradients were gathered already
            self.groups.append(_GroupShards(g, grads, slots, param,
                                            _bounds(n, size, g.param.itemsize), comm.rank))
        comm.barrier()  # rank 0's values are in place
        for gs in self.groups:
            _rehome(gs.group, gs.param, gs.grads[comm.rank], gs.slots)
            gs.own = _Slice(gs.group, *gs.bounds[comm.rank])
        optimizer._fk_buffers_changed()
        _ATTACHED.add(optimizer)
        return self

    def detach(self, optimizer):
        """Private copies of every buffer (values kept); no collective."""
        for gs in self.groups:
            g = gs.group
            _rehome(g, np.array(g.param, copy=True), np.array(g.grad, copy=True),
                    {name: np.array(buf, copy=True) for name, buf in g.slots.items()})
        optimizer._fk_buffers_changed()
        self.groups = []
        _ATTACHED.discard(optimizer)

    def apply(self, optimizer):
        """One optimizer step from every rank's gathered gradients (see the module doc)."""
        comm, rank = self.comm, self.comm.rank
        # Gradients already summed over ranks (a wrapper's step reduced them during the
        # backward): each rank holds the whole sum, only the update is sharded.
        summed, _state.PRE_REDUCED = _state.PRE_REDUCED, False
        self.weights[rank] = _state.GRAD_WEIGHT
        step = optimizer._update_count()
        lr = optimizer._current_lr()
        optimizer._before_update(step)
        comm.barrier()  # every rank's gradient and weight are in shared memory
        weights = self.weights.tolist()
        factor = optimizer.loss_scale_factor
        clip = optimizer.clipvalue
        for gs in self.groups:
            own = gs.own
            lo, hi = gs.bounds[rank]
            out = own.grad
            if summed:
                pass
            elif all(w == weights[0] for w in weights):
                for k, grads in enumerate(gs.grads):
                    if k != rank:
                        out += grads[lo:hi]
                if weights[0] != 1.0:
                    out *= out.dtype.type(weights[0])
            else:  # an uneven last batch: each rank's rows weigh differently
                out *= out.dtype.type(weights[rank])
                for k, grads in enumerate(gs.grads):
                    if k != rank:
                        out += grads[lo:hi] * out.dtype.type(weights[k])
            if factor is not None:
                out /= factor
            if clip and clip > 0:
                np.clip(out, -clip, clip, out=out)
            wd = float(optimizer.weight_decay) if gs.group.use_decay else 0.0
            optimizer._update(own, lr, step, wd)
        comm.barrier()  # every slice is updated: the next forward may read them all
        optimizer._after_update(step)
