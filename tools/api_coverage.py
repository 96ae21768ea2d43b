"""Prints, per API module, how many of Keras's public names fkeras has, and which are missing.

Usage:
    KERAS_BACKEND=torch PYTHONPATH=python python tools/api_coverage.py [--missing] [MODULE ...]

Needs keras installed (`dir(keras.<module>)` is the reference list). MODULE defaults to the
modules issue 12 measures. `--missing` lists the missing names of each module.
"""

import argparse
import importlib
import os
import sys

MODULES = ["ops", "activations", "losses", "metrics", "initializers", "random", "backend",
           "config", "saving", "regularizers", "constraints", "utils", "layers", "callbacks",
           "optimizers", "models", "applications"]
MODULES += ["mixed_precision", "tree", "preprocessing", "preprocessing.image",
            "preprocessing.sequence"]
MODULES += ["quantizers"]


def public_names(module):
    return {n for n in dir(module) if not n.startswith("_")}


def coverage(name):
    """(present, total, missing) of keras.<name>'s public names in fkeras.<name>."""
    theirs = public_names(importlib.import_module(f"keras.{name}"))
    ours = importlib.import_module(f"fkeras.{name}")
    missing = sorted(n for n in theirs if not hasattr(ours, n))
    return len(theirs) - len(missing), len(theirs), missing


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", default=MODULES)
    parser.add_argument("--missing", action="store_true", help="list the missing names")
    args = parser.parse_args(argv)
    os.environ.setdefault("KERAS_BACKEND", "torch")
    import keras

    print(f"fkeras vs keras {keras.__version__}")
    print("| module | fkeras has | of Keras's | share |")
    print("| --- | ---: | ---: | ---: |")
    rows = []
    for name in args.modules:
        present, total, missing = coverage(name)
        rows.append((name, missing))
        print(f"| `{name}` | {present} | {total} | {present / max(total, 1):.0%} |")
    if args.missing:
        for name, missing in rows:
            print(f"\n{name} ({len(missing)} missing): {', '.join(missing)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
