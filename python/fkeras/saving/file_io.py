"""Atomic file writes: every fkeras save goes through `atomic_write`.

The data is written to a temporary file in the target's directory, fsynced, renamed over the
target (os.replace is atomic on POSIX and Windows), then the directory is fsynced: a crash or
a kill -9 at any moment leaves either the previous file or the new one, never a truncated
file (Keras writes in place; keras-team/keras#6221, #17012, #20463).

A save killed before the rename (kill -9, power loss) leaves its temporary file behind; the
next save to the same path removes such leftovers: only names of our exact pattern for that
target (`.<name>.tmp<pid><suffix>`), and only when process <pid> no longer exists (a save in
progress in another live process keeps its file).
"""

import os
import re
import shutil


def _suffix(base):
    # Keep the full suffix (".weights.h5", ".keras"): writers check the extension.
    return ".weights.h5" if base.endswith(".weights.h5") else os.path.splitext(base)[1]


def _temp_path(filepath):
    directory = os.path.dirname(os.path.abspath(filepath))
    base = os.path.basename(filepath)
    return directory, os.path.join(directory, f".{base}.tmp{os.getpid()}{_suffix(base)}")


def _pid_alive(pid):
    if pid == os.getpid():
        return False  # our own leftover: this process is not writing it now
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # exists (another user's), or cannot tell: keep the file
    return True


def remove_stale_temp_files(filepath):
    """Removes temporary files that killed saves to `filepath` left behind.

    Args:
        filepath: the save target.

    Returns:
        The list of removed paths.
    """
    directory = os.path.dirname(os.path.abspath(filepath))
    base = os.path.basename(filepath)
    pattern = re.compile(re.escape(f".{base}.tmp") + r"(\d{1,10})" + re.escape(_suffix(base)))
    removed = []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        match = pattern.fullmatch(name)
        if match is None or _pid_alive(int(match.group(1))):
            continue
        path = os.path.join(directory, name)
        try:
            if os.path.isfile(path) and not os.path.islink(path):
                os.remove(path)
                removed.append(path)
        except OSError:
            pass  # gone already, or not ours to remove
    return removed


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
    remove_stale_temp_files(filepath)
    try:
        write(tmp)
        _fsync_path(tmp)
        os.replace(tmp, filepath)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    if hasattr(os, "O_DIRECTORY"):
        _fsync_path(directory, os.O_RDONLY | os.O_DIRECTORY)


def atomic_write_dir(dirpath, members):
    """Writes `members` ({file name: bytes}) as the files of directory `dirpath`: built and
    fsynced in a temporary sibling directory, then renamed into place (an existing directory
    is swapped out first and removed after). On an exception `dirpath` is untouched."""
    dirpath = os.path.abspath(os.fspath(dirpath))
    parent, base = os.path.split(dirpath)
    os.makedirs(parent, exist_ok=True)
    tmp = os.path.join(parent, f".{base}.tmpdir{os.getpid()}")
    old = os.path.join(parent, f".{base}.old{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    try:
        for name, data in members.items():
            path = os.path.join(tmp, *name.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
            _fsync_path(path)
        if hasattr(os, "O_DIRECTORY"):
            _fsync_path(tmp, os.O_RDONLY | os.O_DIRECTORY)
        if os.path.isdir(dirpath) and not os.path.islink(dirpath):
            os.replace(dirpath, old)
        os.replace(tmp, dirpath)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)
    if hasattr(os, "O_DIRECTORY"):
        _fsync_path(parent, os.O_RDONLY | os.O_DIRECTORY)
