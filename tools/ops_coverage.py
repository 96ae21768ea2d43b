"""Prints how many public names of Keras's `keras.ops` fkeras.ops has, and which are missing.

Usage:
    KERAS_BACKEND=torch PYTHONPATH=python python tools/ops_coverage.py [--guides DIR]

Needs keras installed (its `dir(keras.ops)` is the reference list). With `--guides DIR` (a
keras-io checkout's guides/ folder), also lists the `ops.<name>` / `keras.ops.<name>` calls of
its `*.py` files that fkeras.ops lacks. Without it, checks the names that the Keras 3 guides
read for docs/ops_coverage.md call (GUIDE_NAMES).
"""

import argparse
import os
import re
import sys

# ops.<name> calls in the keras-io guides read for docs/ops_coverage.md (keras_core/ and top
# level: intro_to_keras_for_engineers, making_new_layers_and_models_via_subclassing,
# training_with_built_in_methods, understanding_masking_and_padding, custom_train_step_*).
GUIDE_NAMES = ["binary_crossentropy", "cast", "conv", "exp", "expand_dims", "matmul", "mean",
               "not_equal", "ones", "relu", "reshape", "shape", "softmax", "square", "stack",
               "sum", "zeros"]


def public_names(module):
    return sorted(n for n in dir(module) if not n.startswith("_"))


def guide_names(folder):
    pattern = re.compile(r"\bops\.([a-z_][a-z0-9_]*)")
    found = set()
    for root, _, files in os.walk(folder):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(root, name), encoding="utf8") as f:
                    found.update(pattern.findall(f.read()))
    return sorted(found)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--guides", help="a keras-io guides/ folder to scan")
    args = parser.parse_args(argv)
    os.environ.setdefault("KERAS_BACKEND", "torch")
    import keras

    import fkeras.ops

    reference = public_names(keras.ops)
    ours = set(public_names(fkeras.ops))
    have = [n for n in reference if n in ours]
    missing = [n for n in reference if n not in ours]
    print(f"keras {keras.__version__}: {len(reference)} public names in keras.ops")
    print(f"fkeras.ops has {len(have)} of them ({100 * len(have) / len(reference):.1f}%)")
    print(f"missing ({len(missing)}): {' '.join(missing)}")
    wanted = guide_names(args.guides) if args.guides else GUIDE_NAMES
    wanted = [n for n in wanted if n in reference]
    lacking = [n for n in wanted if n not in ours]
    print(f"guide names: {len(wanted) - len(lacking)} of {len(wanted)} present"
          + (f"; missing: {' '.join(lacking)}" if lacking else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
