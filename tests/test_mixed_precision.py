"""fkeras.mixed_precision: Keras 3's names, the same objects as fkeras's dtype-policy API."""

import inspect

import numpy as np
import pytest

import fkeras
from fkeras import mixed_precision as mp


@pytest.fixture(autouse=True)
def _reset_policy():
    yield
    fkeras.config.set_dtype_policy("float32")


@pytest.mark.parametrize("name,target", [
    ("DTypePolicy", fkeras.DTypePolicy), ("Policy", fkeras.DTypePolicy),
    ("dtype_policy", fkeras.config.dtype_policy),
    ("global_policy", fkeras.config.dtype_policy),
    ("set_dtype_policy", fkeras.config.set_dtype_policy),
    ("set_global_policy", fkeras.config.set_dtype_policy),
    ("LossScaleOptimizer", fkeras.optimizers.LossScaleOptimizer),
])
def test_names_are_fkeras_objects(name, target):
    assert getattr(mp, name) is target


def test_set_global_policy_reaches_new_layers():
    mp.set_global_policy("mixed_bfloat16")
    assert mp.global_policy() == mp.Policy("mixed_bfloat16")
    layer = fkeras.layers.Dense(2)
    assert (layer.compute_dtype, layer.variable_dtype) == ("bfloat16", "float32")
    mp.set_global_policy(mp.DTypePolicy("float32"))
    assert mp.global_policy().name == "float32" and fkeras.layers.Dense(2).compute_dtype == \
        "float32"


@pytest.mark.parametrize("name", ["mixed_float16", "float16", "bfloat16", "float64"])
def test_unsupported_policies_are_refused(name):
    with pytest.raises(ValueError, match=f"The dtype policy '{name}'"):
        mp.set_global_policy(name)
    assert mp.global_policy().name == "float32"


def test_loss_scale_optimizer_trains():
    model = fkeras.Sequential([fkeras.Input((3,)), fkeras.layers.Dense(1)])
    model.compile(optimizer=mp.LossScaleOptimizer(fkeras.optimizers.SGD(0.1)), loss="mse")
    x = np.random.default_rng(0).normal(size=(32, 3)).astype("float32")
    y = x @ np.array([[1.0], [-2.0], [0.5]], dtype="float32")
    history = model.fit(x, y, epochs=20, verbose=0).history["loss"]
    assert history[-1] < 0.05 * history[0]


def test_matches_keras_names_and_signatures():
    keras = pytest.importorskip("keras")
    theirs = sorted(n for n in dir(keras.mixed_precision) if not n.startswith("_"))
    assert theirs == sorted(mp.__all__)
    for name in theirs:
        k, f = getattr(keras.mixed_precision, name), getattr(mp, name)
        if inspect.isclass(k):
            k, f = k.__init__, f.__init__
        assert inspect.signature(f) == inspect.signature(k), name
