"""Suite-wide fixtures: fresh automatic names for every test.

Keras 3 (the parity tests' reference, optional) needs a backend: with KERAS_BACKEND unset, pick
torch when it is installed, before any test module imports keras.
"""

import importlib.util
import os

import pytest

if "KERAS_BACKEND" not in os.environ and importlib.util.find_spec("torch") is not None:
    os.environ["KERAS_BACKEND"] = "torch"

import fkeras


@pytest.fixture(autouse=True)
def _fresh_names():
    fkeras.utils.clear_session()
    yield
