"""Keras 3's `keras.distribution` API over MPI processes: one device per process.

A process is one replica (its device is `cpu:<rank>`); `initialize()` joins the MPI world when
the script runs under `mpiexec` (and does nothing in a single process); `DataParallel` over
the mesh of every process, set with `set_distribution`, makes `fit`, `evaluate` and `predict`
data-parallel (see `fkeras/distribution/data_parallel.py` for the semantics).
"""

import contextlib
import os

import numpy as np

from fkeras.distribution import _state
from fkeras.distribution import comm as _comm

DEFAULT_BATCH_DIM_NAME = "batch"
_world = {"comm": _comm.SingleProcess(), "distribution": None}


def initialize(job_addresses=None, num_processes=None, process_id=None, timeout=None):
    """Joins the MPI world when the script runs under an MPI launcher (`mpiexec -n N`).

    Without a launcher (or with one process) this is a no-op and mpi4py is not imported.
    Under MPI it also makes an unhandled exception on any rank abort the whole job, seeds
    every rank's random generators with rank 0's seed (the same initial weights and shuffles),
    starts a watchdog that aborts the job when a collective waits longer than `timeout`, and,
    unless FKERAS_NUM_THREADS or OMP_NUM_THREADS is set, gives each rank its share of the
    machine's cores.

    Args:
        job_addresses, num_processes, process_id: Keras 3's arguments for JAX's coordinator;
            MPI takes them from the launcher, so they are only checked against it.
        timeout: seconds one collective may wait (None: `FKERAS_DIST_TIMEOUT`, else 600).

    Example:
    ```python
    fkeras.distribution.initialize()
    fkeras.distribution.set_distribution(fkeras.distribution.DataParallel())
    ```
    """
    if _world["comm"].size > 1 or not _comm.under_mpi_launcher():
        return
    try:
        comm = _comm.MPICommunicator(timeout=timeout)
    except ImportError as e:
        raise ImportError("fkeras.distribution.initialize(): this process runs under an MPI "
                          "launcher but mpi4py is not installed. Install it with "
                          '`pip install "fkeras[mpi]"`.') from e
    for name, given, actual in (("num_processes", num_processes, comm.size),
                                ("process_id", process_id, comm.rank)):
        if given is not None and int(given) != actual:
            raise ValueError(f"fkeras.distribution.initialize(): `{name}={given}` does not "
                             f"match the MPI launcher's value {actual}.")
    _comm.install_excepthook(comm)
    _world["comm"] = comm
    _share_cores(comm)
    from fkeras.utils import random as _random

    seed = comm.broadcast(int(np.random.SeedSequence().entropy % (2**62)))
    _random.set_random_seed(seed)
    _activate()


def _share_cores(comm):
    """Without FKERAS_NUM_THREADS / OMP_NUM_THREADS, the ranks on one machine split its cores
    (each would otherwise start a thread per core, oversubscribing them)."""
    if os.environ.get("FKERAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS"):
        return
    from fkeras import config

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    config.set_num_threads(max(1, (cores or 1) // comm.local_size()))


def get_communicator():
    """The communicator of this job (a one-process stand-in without MPI)."""
    return _world["comm"]


def process_rank():
    """This process's rank in the job (0 without MPI)."""
    return _world["comm"].rank


def num_processes():
    """The number of processes in the job (1 without MPI)."""
    return _world["comm"].size


def is_rank_zero():
    """True on the process that prints progress and writes files (rank 0)."""
    return _world["comm"].rank == 0


def list_devices(device_type=None):
    """Every device of the job: one `cpu:<rank>` per process (Keras 3's global list)."""
    if device_type is not None and str(device_type).lower() != "cpu":
        raise ValueError("fkeras.distribution.list_devices(): only `device_type='cpu'` is "
                         f"available. Received: device_type={device_type}")
    return [f"cpu:{r}" for r in range(num_processes())]


def get_device_count(device_type=None):
    """The number of devices of the job (one per process)."""
    return len(list_devices(device_type))


class DeviceMesh:
    """A mesh of devices with named axes (Keras 3); fkeras uses its first axis for data.

    Args:
        shape: the mesh shape, e.g. `(num_processes,)`.
        axis_names: one name per axis.
        devices: device names (default: `list_devices()`).
    """

    def __init__(self, shape, axis_names, devices=None):
        if not shape or not axis_names:
            raise ValueError("Shape and axis_names cannot be empty. Received: "
                             f"shape={shape}, axis_names={axis_names}")
        if len(shape) != len(axis_names):
            raise ValueError("Shape and axis_names should have same size. Received: "
                             f"shape={shape}, axis_names={axis_names}")
        devices = np.array(list_devices() if devices is None else devices)
        if int(np.prod(shape)) != devices.size:
            raise ValueError("Shape does not match the number of devices. Received: "
                             f"shape={shape}; devices.shape={devices.shape}")
        self.shape, self.axis_names = tuple(shape), list(axis_names)
        self.devices = devices.reshape(self.shape)

    def __repr__(self):
        return f"<DeviceMesh shape={self.shape}, axis_names={self.axis_names}>"


class DataParallel:
    """Data parallelism: every process holds the whole model and computes its share of each
    batch; gradients are averaged across processes before every update.

    `batch_size` stays the global batch: each of N processes computes `batch_size / N` rows
    of every step.

    Args:
        device_mesh: a 1-D `DeviceMesh` (its first axis is used when it has several).
        devices: device names, instead of a mesh (default: every process's device).
        auto_shard_dataset: True: every process passes the same data and reads its own shard
            of each batch. False: each process already passes its own data, batched with its
            local batch size.

    Example:
    ```python
    fkeras.distribution.set_distribution(fkeras.distribution.DataParallel())
    model.fit(x, y, batch_size=64)   # 32 rows per process on 2 processes
    ```
    """

    def __init__(self, device_mesh=None, devices=None, auto_shard_dataset=True):
        if device_mesh is not None and not isinstance(device_mesh, DeviceMesh):
            raise ValueError("Expect `mesh` to be an instance of `DeviceMesh`. Received: "
                             f"mesh={device_mesh} (of type {type(device_mesh)})")
        if device_mesh is None:
            device_mesh = DeviceMesh((len(devices),) if devices else (num_processes(),),
                                     [DEFAULT_BATCH_DIM_NAME], devices)
        if device_mesh.devices.size != num_processes():
            raise ValueError(
                f"DataParallel: the mesh has {device_mesh.devices.size} devices but the job "
                f"has {num_processes()} processes (one device per process). Call "
                "fkeras.distribution.initialize() first when running under mpiexec.")
        self.device_mesh = device_mesh
        self.batch_dim_name = device_mesh.axis_names[0]
        self.auto_shard_dataset = bool(auto_shard_dataset)

    @property
    def num_model_replicas(self):
        return int(self.device_mesh.devices.size)

    @contextlib.contextmanager
    def scope(self):
        """Makes this the distribution inside a `with` block."""
        previous = distribution()
        set_distribution(self)
        try:
            yield
        finally:
            set_distribution(previous)

    def __repr__(self):
        return f"<DataParallel mesh={self.device_mesh}>"


def distribution():
    """The current distribution (None: single-process training)."""
    return _world["distribution"]


def set_distribution(value):
    """Sets the global distribution (a `DataParallel`, or None to turn it off)."""
    if value is not None and not isinstance(value, DataParallel):
        raise ValueError("fkeras.distribution.set_distribution(): expected a DataParallel "
                         f"instance or None. Received: {value!r}")
    _world["distribution"] = value
    _activate()


def _activate():
    dist, comm = _world["distribution"], _world["comm"]
    _state.COMM = comm if dist is not None and comm.size > 1 else None
    _state.GRAD_WEIGHT = 1.0 / comm.size
    from fkeras.distribution import sharded_update

    sharded_update.detach_all(keep=_state.COMM)  # shared buffers end with their job
