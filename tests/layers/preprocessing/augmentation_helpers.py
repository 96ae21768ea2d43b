"""Shared helpers of the augmentation tests (tests/layers/preprocessing/test_augmentation_*):
Keras import (torch backend, skip without it), conversions, images, and the checks every
layer goes through (config keys against Keras, `.keras` files both ways)."""

import importlib.util
import os

import numpy as np
import pytest

import fkeras


def keras_or_skip():
    if "KERAS_BACKEND" not in os.environ and importlib.util.find_spec("torch") is not None:
        os.environ["KERAS_BACKEND"] = "torch"
    return pytest.importorskip("keras")


def to_np(value):
    """A Keras tensor / nested transformation as NumPy (dicts, tuples kept)."""
    keras = keras_or_skip()
    if isinstance(value, dict):
        return {k: to_np(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(to_np(v) for v in value)
    if isinstance(value, (int, float, type(None))):
        return value
    return np.asarray(keras.ops.convert_to_numpy(value))


def to_keras(value):
    """NumPy transformation values as Keras tensors (dicts, tuples kept)."""
    keras = keras_or_skip()
    if isinstance(value, dict):
        return {k: to_keras(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(to_keras(v) for v in value)
    if isinstance(value, np.ndarray):
        return keras.ops.convert_to_tensor(value)
    return value


def images(shape=(2, 7, 9, 3), low=0.0, high=255.0, seed=0):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(np.float32)


def assert_config_keys_match(name, kwargs):
    """fkeras's config has exactly Keras's keys (activity_regularizer aside), equal values for
    the arguments."""
    keras = keras_or_skip()
    k = getattr(keras.layers, name)(**kwargs).get_config()
    f = getattr(fkeras.layers, name)(**kwargs).get_config()
    k.pop("activity_regularizer", None)
    f.pop("activity_regularizer", None)
    assert set(k) == set(f), (sorted(set(k) - set(f)), sorted(set(f) - set(k)))
    for key in kwargs:
        if key in k:
            kv, fv = k[key], f[key]
            if isinstance(kv, (list, tuple)):
                kv, fv = list(kv), list(fv)
            assert kv == fv, (key, kv, fv)


def augment_model(lib, name, kwargs, shape):
    inp = lib.Input(shape, name="x")
    y = getattr(lib.layers, name)(**kwargs, name="aug")(inp)
    y = lib.layers.Conv2D(2, 3, padding="same", name="conv")(y)
    return lib.Model(inp, y)
