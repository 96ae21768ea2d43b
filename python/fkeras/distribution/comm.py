"""A small communicator over mpi4py (imported only here, only when a job runs under MPI).

`SingleProcess` is the same interface for one process: every collective is the identity, so
callers never branch on the world size. `MPICommunicator` wraps `MPI.COMM_WORLD`:
- buffer collectives (`allreduce_sum`, `broadcast_array`) work in place on NumPy arrays;
- object collectives (`allgather`, `broadcast`) pickle small Python values;
- every collective runs under a watchdog: a collective still waiting after `timeout` seconds
  (a peer that hangs or died without MPI noticing) prints which call and aborts the whole job;
- `install_excepthook` makes an unhandled exception on any rank print its traceback and call
  `MPI_Abort`, so the launcher ends every rank instead of leaving them blocked in a collective.
A rank killed by a signal is noticed by the launcher (mpiexec), which ends the others.
"""

import os
import sys
import threading
import time

import numpy as np

DEFAULT_TIMEOUT = 600.0  # seconds a single collective may wait before the job is aborted


class SingleProcess:
    """The one-process communicator: rank 0 of 1, every collective returns its input."""

    rank, size = 0, 1

    def allreduce_sum(self, array):
        return array

    def broadcast_array(self, array, root=0):
        return array

    def allgather(self, obj):
        return [obj]

    def broadcast(self, obj, root=0):
        return obj

    def barrier(self):
        pass

    def abort(self, code=1):
        raise SystemExit(code)


class _Watchdog:
    """Aborts the job when one collective waits longer than `timeout` seconds."""

    def __init__(self, comm, timeout):
        self.comm, self.timeout = comm, float(timeout)
        self.started, self.what = None, None
        thread = threading.Thread(target=self._run, name="fkeras-mpi-watchdog", daemon=True)
        thread.start()

    def _run(self):
        period = min(1.0, self.timeout / 4)
        while True:
            time.sleep(period)
            started = self.started
            if started is not None and time.monotonic() - started > self.timeout:
                sys.stderr.write(
                    f"fkeras.distribution: rank {self.comm.rank} waited more than "
                    f"{self.timeout:g} s in the collective `{self.what}`: another rank has "
                    "stopped or diverged (different number of steps?). Aborting the job.\n")
                sys.stderr.flush()
                self.comm.Abort(1)

    def enter(self, what):
        self.what = what
        self.started = time.monotonic()

    def leave(self):
        self.started = None


class MPICommunicator:
    """`MPI.COMM_WORLD` with a watchdog on every collective.

    Args:
        timeout: seconds one collective may wait before the job is aborted (None: the
            `FKERAS_DIST_TIMEOUT` environment variable, else 600).
    """

    def __init__(self, timeout=None):
        from mpi4py import MPI

        self._MPI = MPI
        self.comm = MPI.COMM_WORLD
        self.rank, self.size = self.comm.Get_rank(), self.comm.Get_size()
        if timeout is None:
            timeout = float(os.environ.get("FKERAS_DIST_TIMEOUT", DEFAULT_TIMEOUT))
        self.timeout = timeout
        self._watchdog = _Watchdog(self.comm, timeout) if timeout and timeout > 0 else None

    def _guard(self, what, fn, *args):
        wd = self._watchdog
        if wd is None:
            return fn(*args)
        wd.enter(what)
        try:
            return fn(*args)
        finally:
            wd.leave()

    def allreduce_sum(self, array):
        """Sums a contiguous NumPy array over ranks, in place; returns it."""
        if not array.flags.c_contiguous:
            raise ValueError("allreduce_sum needs a C-contiguous array; received one with "
                             f"shape {array.shape} and strides {array.strides}")
        self._guard("allreduce", self.comm.Allreduce, self._MPI.IN_PLACE, array,
                    self._MPI.SUM)
        return array

    def iallreduce_sum(self, array):
        """Starts summing a contiguous array over ranks in place; returns the request."""
        return self.comm.Iallreduce(self._MPI.IN_PLACE, array, self._MPI.SUM)

    def test_all(self, requests):
        """Progresses pending requests (MPI moves data only inside its calls)."""
        return self._MPI.Request.Testall(requests)

    def wait_all(self, requests):
        if requests:
            self._guard("allreduce (bucketed)", self._MPI.Request.Waitall, requests)

    def broadcast_array(self, array, root=0):
        """Overwrites `array` (contiguous) on every rank with root's values; returns it."""
        self._guard("broadcast", self.comm.Bcast, array, root)
        return array

    def allgather(self, obj):
        """[obj of rank 0, obj of rank 1, ...] on every rank (small picklable values)."""
        return self._guard("allgather", self.comm.allgather, obj)

    def broadcast(self, obj, root=0):
        return self._guard("broadcast", self.comm.bcast, obj, root)

    def barrier(self):
        self._guard("barrier", self.comm.Barrier)

    def abort(self, code=1):
        self.comm.Abort(code)

    def local_size(self):
        """The number of ranks on this machine."""
        local = self.comm.Split_type(self._MPI.COMM_TYPE_SHARED)
        try:
            return local.Get_size()
        finally:
            local.Free()


def install_excepthook(comm):
    """An unhandled exception on this rank prints its traceback, then aborts every rank."""
    previous = sys.excepthook

    def hook(kind, value, tb):
        previous(kind, value, tb)
        sys.stderr.write(f"fkeras.distribution: rank {comm.rank} of {comm.size} raised "
                         f"{kind.__name__}; aborting the job on every rank.\n")
        sys.stderr.flush()
        # MPI_Abort ends the launcher's output forwarding at once: give it a moment to pass
        # the traceback on (the job is failing anyway).
        time.sleep(0.5)
        comm.abort(1)

    sys.excepthook = hook


def under_mpi_launcher():
    """Whether this process was started by an MPI launcher with more than one rank."""
    for name in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"):
        value = os.environ.get(name)
        if value is not None:
            try:
                return int(value) > 1
            except ValueError:
                return True
    return "PMI_RANK" in os.environ or "PMIX_RANK" in os.environ


def as_float_buffer(values, dtype=np.float64):
    """One contiguous buffer holding `values` (a list of arrays), and a function to split it
    back into arrays of the original shapes."""
    arrays = [np.asarray(v) for v in values]
    flat = np.concatenate([a.reshape(-1).astype(dtype) for a in arrays]) if arrays else \
        np.zeros(0, dtype)

    def split(buf):
        out, off = [], 0
        for a in arrays:
            out.append(buf[off:off + a.size].reshape(a.shape).astype(a.dtype))
            off += a.size
        return out

    return flat, split
