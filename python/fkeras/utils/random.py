"""Global seeding: `set_random_seed(s)` makes CPU runs repeatable (initializers, shuffling,
dropout all draw from generators seeded here)."""

import random as _py_random

import numpy as np

from fkeras.engine import replay as _replay

_state = {"rng": np.random.default_rng(), "seed": None, "counter": 0}


def set_random_seed(seed):
    """Seeds Python's `random`, NumPy's global RNG and fkeras's generators."""
    seed = int(seed)
    _py_random.seed(seed)
    np.random.seed(seed % (2**32))
    _state["rng"] = np.random.default_rng(seed)
    _state["seed"] = seed
    _state["counter"] = 0


def global_rng():
    return _state["rng"]


def next_seed():
    """A fresh 63-bit seed from the global generator (for kernels such as dropout); a
    rematerialized call's recomputation gets the seeds its first run drew (engine/replay.py)."""
    if _replay.active():
        return _replay.draw_seed(_draw)
    return _draw()


def _draw():
    return int(_state["rng"].integers(0, 2**63 - 1))


def make_rng(seed=None):
    """A Generator: from `seed` when given, else drawn from the global generator."""
    if seed is None:
        return np.random.default_rng(next_seed())
    return np.random.default_rng(int(seed))
