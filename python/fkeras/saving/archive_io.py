"""Bounded reading of a `.keras` zip archive.

The member count is checked before zipfile parses the central directory, then every member
before anything is decompressed:
- names: no absolute paths, drive letters, `..` components, backslashes, NUL bytes, symlink
  entries or duplicated names (the loader never extracts, but such an archive is not one a
  writer of the format makes, so it is refused rather than half-trusted);
- sizes: the size a member declares in the central directory must fit the limit for that
  member (a few MB for config.json/metadata.json, a bound proportional to the model's
  weights for model.weights.h5), so a decompression bomb is refused before one byte of it is
  inflated. zipfile never returns more than the declared size, and reads are chunked and
  counted as well.
"""

import os
import stat
import zipfile

import numpy as np

CONFIG_LIMIT = 8 * 2**20     # config.json: a config is never more than a few MB
METADATA_LIMIT = 2**20       # metadata.json: a version and a date
MAX_MEMBERS = 1024           # a .keras holds 3 members plus assets; each costs ~0.5 KB parsed
# A JSON member may inflate at most JSON_RATIO times its stored bytes above JSON_FLOOR: Python
# objects take 10-20x their JSON text, so a small compressed config must not expand far.
JSON_RATIO = 50
JSON_FLOOR = 2**20
_CHUNK = 2**20


def format_size(n):
    """Bytes with Keras's units (B, KB, MB, ... by 1024, two decimals)."""
    n = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.2f} {unit}"
        n /= 1024
    return f"{n:.2f} PB"


def check_member_names(zf):
    """Refuses archives with path-traversal, absolute, symlink or duplicated member names.

    Raises:
        ValueError: naming the first offending member.
    """
    seen = set()
    for info in zf.infolist():
        name = info.filename
        parts = name.replace("\\", "/").split("/")
        bad = (name.startswith(("/", "\\")) or "\\" in name or "\x00" in name
               or ".." in parts or (len(name) > 1 and name[1] == ":"))
        if bad:
            raise ValueError(f"Not allowed: archive member {name!r} has an absolute or "
                             "path-traversal name; refusing to load the file.")
        if stat.S_ISLNK(info.external_attr >> 16):
            raise ValueError(f"Not allowed: archive member {name!r} is a symbolic link; "
                             "refusing to load the file.")
        if name in seen:
            raise ValueError(f"Not allowed: archive member {name!r} appears twice; refusing "
                             "to load the file.")
        seen.add(name)


def read_member(zf, name, limit, max_ratio=None):
    """The bytes of member `name`, refused up front when it declares more than `limit`, or
    (with `max_ratio`) more than max(JSON_FLOOR, max_ratio x its stored bytes).

    Raises:
        ValueError: when the declared (or the actually inflated) size exceeds the bound.
    """
    info = zf.getinfo(name)
    if max_ratio is not None and info.file_size > max(JSON_FLOOR,
                                                      max_ratio * info.compress_size):
        raise ValueError(
            f"Not allowed: ZIP member '{name}' declares {format_size(info.file_size)} but only "
            f"{format_size(info.compress_size)} are stored on disk; refusing to load a "
            "potential decompression bomb.")
    if info.file_size > limit:
        raise ValueError(
            f"Not allowed: ZIP member '{name}' declares {format_size(info.file_size)} (stored "
            f"on disk: {format_size(info.compress_size)}), more than the "
            f"{format_size(limit)} this model can need; refusing to load a potential "
            "decompression bomb.")
    chunks, total = [], 0
    with zf.open(info) as member:
        while True:
            chunk = member.read(min(_CHUNK, limit + 1 - total))
            if not chunk:
                break
            total += len(chunk)
            if total > limit:
                raise ValueError(f"Not allowed: ZIP member '{name}' inflates past "
                                 f"{format_size(limit)}; refusing to load a potential "
                                 "decompression bomb.")
            chunks.append(chunk)
    return b"".join(chunks)


def weights_limit(model):
    """The largest model.weights.h5 a file for `model` may hold: room for the model's
    variables, an optimizer with up to three slots per variable (Adam with amsgrad, whether
    or not this model is compiled), and HDF5's per-group and per-dataset overhead."""
    from fkeras.saving import weights_h5

    model_bytes, count = 0, 0
    for _, layer in weights_h5.walk(model):
        count += 1
        for v in weights_h5._own_variables(layer):
            model_bytes += weights_h5.nbytes(v)
            count += 1
        for shape in (weights_h5._named_shapes(layer) or {}).values():
            model_bytes += 8 * int(np.prod(shape, dtype=np.int64))
            count += 1
    optimizer = getattr(model, "optimizer", None)
    optimizer_bytes = 0
    if optimizer is not None and getattr(optimizer, "built", False):
        optimizer_bytes = sum(weights_h5.nbytes(v) for v in optimizer.variables)
        count += len(optimizer.variables)
    return max(4 * model_bytes, optimizer_bytes) + model_bytes + 16 * 1024 * (count + 8) \
        + 2**20


def _declared_members(filepath):
    """The member count the end-of-central-directory record declares (None if unknown),
    read before zipfile parses the whole directory into objects."""
    end_record = getattr(zipfile, "_EndRecData", None)
    index = getattr(zipfile, "_ECD_ENTRIES_TOTAL", None)
    if end_record is None or index is None:
        return None
    with open(filepath, "rb") as fp:
        record = end_record(fp)
    return None if record is None else record[index]


def open_archive(filepath):
    """A ZipFile whose member count and member names were checked."""
    count = _declared_members(filepath)
    if count is not None and count > MAX_MEMBERS:
        raise ValueError(f"Not allowed: the archive declares {count} members (a `.keras` file "
                         f"holds a few; the limit is {MAX_MEMBERS}); refusing to load the file.")
    try:
        zf = zipfile.ZipFile(filepath, "r")
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise ValueError(f"File format not supported: filepath={filepath}. The file is not a "
                         f"readable `.keras` zip archive ({e}).") from None
    try:
        check_member_names(zf)
    except ValueError:
        zf.close()
        raise
    return zf


class DirectoryArchive:
    """The unzipped `.keras` layout (a directory holding config.json, metadata.json and
    model.weights.h5, Keras 3's `zipped=False`) behind the ZipFile calls `read_member` uses.
    Only regular files of the known names count: links and other entries are ignored."""

    class _Info:
        def __init__(self, path):
            self.path = path
            self.file_size = self.compress_size = os.stat(path).st_size

    def __init__(self, dirpath, names):
        self.dirpath = dirpath
        self._names = [n for n in names if _regular_file(os.path.join(dirpath, n))]
        self._names += _asset_files(dirpath)

    def namelist(self):
        return list(self._names)

    def getinfo(self, name):
        return self._Info(os.path.join(self.dirpath, name))

    def open(self, info):
        return open(info.path, "rb")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _regular_file(path):
    return os.path.isfile(path) and not os.path.islink(path)


def _asset_files(dirpath, limit=MAX_MEMBERS):
    """The regular files under `dirpath/assets` as `assets/...` names (links are neither
    followed nor listed; more than `limit` files is refused)."""
    root = os.path.join(dirpath, "assets")
    if not os.path.isdir(root) or os.path.islink(root):
        return []
    out = []
    for current, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(current, d)))
        for name in sorted(files):
            full = os.path.join(current, name)
            if _regular_file(full):
                out.append(os.path.relpath(full, dirpath).replace(os.sep, "/"))
        if len(out) > limit:
            raise ValueError(f"Not allowed: the model directory holds more than {limit} asset "
                             "files; refusing to load it.")
    return out
