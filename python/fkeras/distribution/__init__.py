"""Data-parallel training across processes (Keras 3's `keras.distribution` API, on MPI).

Add two lines to a training script and launch it with `mpiexec -n N python train.py`:
```python
fkeras.distribution.initialize()
fkeras.distribution.set_distribution(fkeras.distribution.DataParallel())
```
mpi4py is imported only by `initialize()` under an MPI launcher.
"""

from fkeras.distribution.distribution_lib import (
    DataParallel,
    DeviceMesh,
    distribution,
    get_communicator,
    get_device_count,
    initialize,
    is_rank_zero,
    list_devices,
    num_processes,
    process_rank,
    set_distribution,
)

__all__ = [
    "DataParallel", "DeviceMesh", "distribution", "get_communicator", "get_device_count",
    "initialize", "is_rank_zero", "list_devices", "num_processes", "process_rank",
    "set_distribution",
]
