"""Atomic file writes: every fkeras save goes through `atomic_write`.

The data is written to a temporary file in the target's directory, fsynced, renamed over the
target (os.replace is atomic on POSIX and Windows), then the directory is fsynced: a crash or
a kill -9 at any moment leaves either the previous file or the new one, never a truncated
file (Keras writes in place; keras-team/keras#6221, #17012, #20463).
"""

import os


def _temp_path(filepath):
    directory = os.path.dirname(os.path.abspath(filepath))
    base = os.path.basename(filepath)
    # Keep the full suffix (".weights.h5", ".keras"): writers check the extension.
    suffix = ".weights.h5" if base.endswith(".weights.h5") else os.path.splitext(base)[1]
    return directory, os.path.join(directory, f".{base}.tmp{os.getpid()}{suffix}")


def _fsync_path(path, flags=os.O_RDONLY):
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(filepath, write):
    """Calls `write(tmp_path)`, fsyncs the file, renames it over `filepath`, fsyncs the
    directory. On an exception the temporary file is removed and `filepath` is untouched."""
    filepath = os.fspath(filepath)
    directory, tmp = _temp_path(filepath)
    os.makedirs(directory, exist_ok=True)
    try:
        write(tmp)
        _fsync_path(tmp)
        os.replace(tmp, filepath)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    if hasattr(os, "O_DIRECTORY"):
        _fsync_path(directory, os.O_RDONLY | os.O_DIRECTORY)
