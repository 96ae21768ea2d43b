"""Writes keras_structures.json: the structure digest of every configuration in
app_table.SNAPSHOT as Keras 3 builds it (weights=None, fresh session, torch backend).

    KERAS_BACKEND=torch python tests/applications/make_keras_structures.py
"""

import importlib
import json
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "torch")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import keras  # noqa: E402

from app_structure import digest, structure  # noqa: E402
from app_table import SNAPSHOT, config_id  # noqa: E402


def build(module, fn, kwargs):
    mod = importlib.import_module(f"keras.applications.{module}")
    if not hasattr(mod, fn):
        mod = importlib.import_module(f"keras.src.applications.{module}")
    keras.backend.clear_session()
    return getattr(mod, fn)(weights=None, **kwargs)


def main():
    """Records the configurations missing from the file (all of them when it is absent)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_structures.json")
    out = {"keras_version": keras.__version__, "configs": {}}
    if os.path.exists(path):
        with open(path) as f:
            out = json.load(f)
    for entry in SNAPSHOT:
        if config_id(entry) in out["configs"]:
            continue
        out["configs"][config_id(entry)] = digest(structure(build(*entry)))
        print(config_id(entry), out["configs"][config_id(entry)]["params"], flush=True)
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
