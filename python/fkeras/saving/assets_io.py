"""Layer assets in a `.keras` archive (Keras 3's `assets/<object path>/...` members).

A layer that defines `save_assets(dir_path)` / `load_assets(dir_path)` (the lookup layers
write `vocabulary.txt`) gets a directory of its own, named by the layer's path in the
weights file (`assets/layers/string_lookup/`), as Keras 3 lays them out; so vocabularies
cross between fkeras and Keras 3 both ways.

Reading is bounded like the rest of the archive: member names were checked when the archive
was opened (no absolute, `..`, backslash or link names); the asset members' declared sizes
must add up to at most `ASSETS_LIMIT`, each is read with `archive_io.read_member` (declared
and actual sizes, compression ratio), and each is written below a fresh temporary directory
only after its path is re-checked to stay inside it.
"""

import os
import tempfile

from fkeras.saving import archive_io, weights_h5

PREFIX = "assets/"
ASSETS_LIMIT = 512 * 2**20  # a vocabulary of millions of tokens is tens of MB
ASSET_RATIO = 200           # text assets compress well, but not like a bomb


def _asset_layers(model, method):
    return [(path, layer) for path, layer in weights_h5.walk(model)
            if callable(getattr(layer, method, None))]


def collect_assets(model):
    """{archive member name: bytes} of the files every layer's `save_assets` writes."""
    members = {}
    layers = _asset_layers(model, "save_assets")
    if not layers:
        return members
    with tempfile.TemporaryDirectory() as tmp:
        for path, layer in layers:
            directory = os.path.join(tmp, *path.split("/")) if path else tmp
            os.makedirs(directory, exist_ok=True)
            layer.save_assets(directory)
        for root, dirs, files in os.walk(tmp):
            dirs.sort()
            for name in sorted(files):
                full = os.path.join(root, name)
                if os.path.islink(full) or not os.path.isfile(full):
                    continue
                rel = os.path.relpath(full, tmp).replace(os.sep, "/")
                with open(full, "rb") as f:
                    members[PREFIX + rel] = f.read()
    return members


def _safe_target(tmp, name):
    parts = name[len(PREFIX):].split("/")
    if not parts or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"Not allowed: asset member {name!r} has an invalid path; refusing "
                         "to load the file.")
    target = os.path.realpath(os.path.join(tmp, "assets", *parts))
    root = os.path.realpath(os.path.join(tmp, "assets"))
    if os.path.commonpath([target, root]) != root:
        raise ValueError(f"Not allowed: asset member {name!r} escapes the asset directory.")
    return target


def load_assets(model, archive):
    """Gives every layer with `load_assets` its asset directory from `archive` (a checked
    ZipFile or DirectoryArchive). Does nothing when no layer takes assets."""
    layers = _asset_layers(model, "load_assets")
    names = [n for n in archive.namelist() if n.startswith(PREFIX) and not n.endswith("/")]
    if not layers or not names:
        return
    declared = sum(archive.getinfo(n).file_size for n in names)
    if declared > ASSETS_LIMIT:
        raise ValueError(f"Not allowed: the archive's assets declare "
                         f"{archive_io.format_size(declared)}, more than the "
                         f"{archive_io.format_size(ASSETS_LIMIT)} limit; refusing to load a "
                         "potential decompression bomb.")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            target = _safe_target(tmp, name)
            data = archive_io.read_member(archive, name, ASSETS_LIMIT, ASSET_RATIO)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as f:
                f.write(data)
        for path, layer in layers:
            directory = os.path.join(tmp, "assets", *path.split("/")) if path else \
                os.path.join(tmp, "assets")
            if os.path.isdir(directory):
                layer.load_assets(directory)
