"""Shared set-up of the Keras parity tests (test_keras_parity*.py): with KERAS_BACKEND unset,
picks Keras's torch backend when torch is importable; imports keras, or skips the importing
test module when it is absent; and the helpers every parity module uses.

    from keras_parity import ATOL, RTOL, flat, keras, randn, to_np
"""

import importlib.util
import os

import numpy as np
import pytest

if "KERAS_BACKEND" not in os.environ and importlib.util.find_spec("torch") is not None:
    os.environ["KERAS_BACKEND"] = "torch"
keras = pytest.importorskip("keras")

RTOL = ATOL = 1e-5


def to_np(t):
    """A Keras tensor (any backend) as a NumPy array."""
    return np.asarray(keras.ops.convert_to_numpy(t))


def randn(*shape, seed=0):
    """Standard normal float32 values of `shape`."""
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def flat(out):
    """A layer's output as a list (a single tensor becomes a one-element list)."""
    return list(out) if isinstance(out, (list, tuple)) else [out]
