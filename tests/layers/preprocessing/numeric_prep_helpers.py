"""Shared helpers of the numeric preprocessing tests: makes `tests/layers` importable (for
`layer_testing`, and `keras_parity` in the Keras parity modules) and `.keras` round trips."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import fkeras  # noqa: E402


def fk_model(layer, shape, dtype="float32", dense=False):
    """A Functional fkeras model: Input(shape) -> layer [-> Dense(2)]."""
    inputs = fkeras.Input(shape=shape, dtype=dtype)
    outputs = layer(inputs)
    if dense:
        outputs = fkeras.layers.Dense(2, kernel_initializer="ones")(outputs)
    return fkeras.Model(inputs, outputs)


def keras_model(keras, layer, shape, dtype="float32", dense=False):
    inputs = keras.Input(shape=shape, dtype=dtype)
    outputs = layer(inputs)
    if dense:
        outputs = keras.layers.Dense(2, kernel_initializer="ones")(outputs)
    return keras.Model(inputs, outputs)


def predict(model, x):
    return np.asarray(model.predict(x, verbose=0))
