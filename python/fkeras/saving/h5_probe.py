"""Reading an untrusted HDF5 file once in a forked child before the process reads it.

A damaged HDF5 file can crash the HDF5 C library itself: fuzzing legacy `.h5` model files
(bytes flipped at random) found a segmentation fault inside h5py's read of a variable-length
string attribute (`model_config`), which no Python code can catch. So the legacy loaders
first let a forked child open the file and read what the loader will read (every attribute,
and the datasets within a 256 MB budget of declared bytes; hard links only). A child killed
by a signal means the library cannot read the file safely: the parent raises a ValueError
instead of crashing. A Python error in the child is left for the parent's own read to report
with its usual message.

Cost: one fork and one extra read of the file (a few milliseconds for a model file; the
child shares the parent's memory copy-on-write). Where the platform has no fork, or the
environment variable FKERAS_H5_PROBE=0 is set, the probe is skipped.
"""

import os
import signal


# Dataset values are read while they stay within this budget (in declared bytes, so a
# dataset declaring 16 GiB in a small file is never read here: the loader refuses it by its
# shape before reading); past it only attributes and dataset headers are checked.
_READ_BUDGET = 256 * 2 ** 20


def _read_everything(h5py, node, budget, depth=0):
    for value in node.attrs.values():
        del value
    if isinstance(node, h5py.Dataset):
        nbytes = node.size * node.dtype.itemsize
        if nbytes <= budget[0]:
            budget[0] -= nbytes
            node[()]
        return
    if depth > 64:
        return
    for name in node:
        link = node.get(name, getlink=True)
        if isinstance(link, h5py.HardLink):
            _read_everything(h5py, node[name], budget, depth + 1)


def check_readable(filepath):
    """Raises ValueError when reading `filepath` with h5py crashes a forked child."""
    if not hasattr(os, "fork") or os.environ.get("FKERAS_H5_PROBE") == "0":
        return
    from fkeras.saving.weights_h5 import _h5py

    h5py = _h5py()
    pid = os.fork()
    if pid == 0:  # the child: read, then leave without running the parent's exit handlers
        try:
            import faulthandler

            faulthandler.disable()  # a crash here is expected and reported by the parent
        except Exception:  # noqa: BLE001
            pass
        try:
            with h5py.File(filepath, "r") as f:
                _read_everything(h5py, f, [_READ_BUDGET])
        except BaseException:  # noqa: BLE001 - a Python error is the parent's to report
            pass
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals.__members__.values() else sig
        raise ValueError(f"Invalid HDF5 file {filepath}: reading it crashed the HDF5 library "
                         f"({name}) in a separate process; the file is corrupt.")
