"""Parity with real Keras 3 (skipped without it) for the normalization and regularization
layers: the same weights give the same outputs in inference and training mode (and the same
moving statistics), and the same weights after one SGD step of a small model, to 1e-5."""

import inspect
import warnings

import numpy as np
import pytest
from keras_parity import ATOL, RTOL, keras, to_np

import fkeras
from fkeras import layers

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning",
                                        "ignore:You passed `rms_scaling=True`")


def _x(*shape, seed=0):
    return (np.random.default_rng(seed).standard_normal(shape) * 2 + 0.5).astype(np.float32)


def _same_weights(k_layer, f_layer, shape, seed=1):
    k_layer.build(shape)
    f_layer.build(shape)
    rng = np.random.default_rng(seed)
    weights = [rng.uniform(0.5, 2.0, w.shape) if ("variance" in w.path or "stddev" in w.path)
               else rng.standard_normal(w.shape) for w in k_layer.weights]
    k_layer.set_weights(weights)
    f_layer.set_weights(weights)


def _call_args(layer):
    return inspect.signature(layer.call).parameters


def _compare_layer(k_layer, f_layer, x, steps=1, **call_kwargs):
    """Inference, then `steps` training calls: outputs and all weights after each."""
    _same_weights(k_layer, f_layer, x.shape)
    np.testing.assert_allclose(f_layer(x, **call_kwargs), to_np(k_layer(x, **call_kwargs)),
                               rtol=RTOL, atol=ATOL)
    for step in range(steps):
        xs = x * (1 + step) + step
        train = {"training": True} if "training" in _call_args(f_layer) else {}
        np.testing.assert_allclose(f_layer(xs, **train, **call_kwargs),
                                   to_np(k_layer(xs, **train, **call_kwargs)),
                                   rtol=RTOL, atol=ATOL)
        for k, f in zip(k_layer.get_weights(), f_layer.get_weights()):
            np.testing.assert_allclose(f, k, rtol=RTOL, atol=ATOL)


def _sgd_step(make_layer, x, y, seed=2):
    """Input -> Dense -> layer -> Dense, one SGD step in both libraries: same weights after."""
    def build(lib):
        inp = lib.Input(shape=x.shape[1:])
        h = lib.layers.Dense(x.shape[-1], kernel_initializer="ones")(inp)
        h = make_layer(lib)(h)
        return lib.Model(inp, lib.layers.Dense(y.shape[-1])(h))

    k_model, f_model = build(keras), build(fkeras)
    rng = np.random.default_rng(seed)
    weights = [rng.uniform(0.5, 2.0, w.shape) if ("variance" in w.path or "stddev" in w.path)
               else rng.standard_normal(w.shape) * 0.5 for w in k_model.weights]
    k_model.set_weights(weights)
    f_model.set_weights(weights)
    for model, lib in ((k_model, keras), (f_model, fkeras)):
        model.compile(optimizer=lib.optimizers.SGD(learning_rate=0.1), loss="mse")
    k_loss = k_model.train_on_batch(x, y)
    f_loss = f_model.train_on_batch(x, y)
    np.testing.assert_allclose(np.asarray(f_loss).ravel()[0], np.asarray(k_loss).ravel()[0],
                               rtol=1e-5)
    for k, f in zip(k_model.get_weights(), f_model.get_weights()):
        np.testing.assert_allclose(f, k, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(f_model.predict(x, verbose=0), to_np(k_model(x)), rtol=RTOL,
                               atol=ATOL)


# ---- BatchNormalization ----

@pytest.mark.parametrize("kwargs,shape", [
    ({}, (6, 5)),
    (dict(axis=1, momentum=0.7), (3, 4, 2, 5)),
    (dict(axis=-2, epsilon=1e-2), (3, 4, 2, 5)),
    (dict(center=False, scale=False), (6, 3)),
    (dict(renorm=True, momentum=0.5, renorm_momentum=0.6), (6, 3)),
    (dict(renorm=True, renorm_clipping={"rmax": 1.2, "rmin": 0.8, "dmax": 0.2},
          momentum=0.5, renorm_momentum=0.6, axis=1), (4, 3, 2)),
])
def test_batch_normalization(kwargs, shape):
    _compare_layer(keras.layers.BatchNormalization(**kwargs),
                   layers.BatchNormalization(**kwargs), _x(*shape), steps=3)


def test_batch_normalization_mask():
    x = _x(3, 5, 2)
    mask = np.random.default_rng(3).uniform(size=(3, 5)) > 0.4
    for kwargs in ({"momentum": 0.5}, {"renorm": True, "momentum": 0.5}):
        k_layer = keras.layers.BatchNormalization(**kwargs)
        f_layer = layers.BatchNormalization(**kwargs)
        _same_weights(k_layer, f_layer, x.shape)
        np.testing.assert_allclose(f_layer(x, training=True, mask=mask),
                                   to_np(k_layer(x, training=True, mask=mask)), rtol=RTOL,
                                   atol=ATOL)
        for k, f in zip(k_layer.get_weights(), f_layer.get_weights()):
            np.testing.assert_allclose(f, k, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("kwargs", [dict(momentum=0.5), dict(renorm=True, momentum=0.5),
                                    dict(center=False, gamma_regularizer="l2")])
def test_batch_normalization_sgd_step(kwargs):
    _sgd_step(lambda lib: lib.layers.BatchNormalization(**kwargs), _x(8, 4), _x(8, 3, seed=5))


def test_batch_normalization_trainable_false():
    x = _x(6, 3)
    k_layer = keras.layers.BatchNormalization(trainable=False)
    f_layer = layers.BatchNormalization(trainable=False)
    _same_weights(k_layer, f_layer, x.shape)
    np.testing.assert_allclose(f_layer(x, training=True), to_np(k_layer(x, training=True)),
                               rtol=RTOL, atol=ATOL)
    for k, f in zip(k_layer.get_weights(), f_layer.get_weights()):
        np.testing.assert_array_equal(f, k)


# ---- LayerNormalization, GroupNormalization, UnitNormalization ----

@pytest.mark.parametrize("kwargs,shape", [({}, (4, 6)), (dict(axis=[1, 2]), (2, 3, 4)),
                                          (dict(axis=1, epsilon=1e-5), (2, 3, 4)),
                                          (dict(center=False), (3, 5)),
                                          (dict(scale=False), (3, 5)),
                                          (dict(rms_scaling=True), (3, 5))])
def test_layer_normalization(kwargs, shape):
    if kwargs.get("axis") == 1 and keras.backend.backend() == "torch":
        pytest.skip("Keras's torch backend hands a non-trailing axis to F.layer_norm, which "
                    "normalizes the trailing axes and fails; checked against NumPy in "
                    "test_normalization.py")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k_layer, f_layer = (keras.layers.LayerNormalization(**kwargs),
                            layers.LayerNormalization(**kwargs))
    _compare_layer(k_layer, f_layer, _x(*shape))


@pytest.mark.parametrize("kwargs", [{}, dict(rms_scaling=True)])
def test_layer_normalization_sgd_step(kwargs):
    def make(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return lib.layers.LayerNormalization(**kwargs)
    _sgd_step(make, _x(5, 4), _x(5, 3, seed=5))


@pytest.mark.parametrize("kwargs,shape", [(dict(groups=2), (2, 3, 4)),
                                          (dict(groups=3, axis=1), (2, 6, 2, 2)),
                                          (dict(groups=-1), (2, 5, 3)),
                                          (dict(groups=1, center=False), (3, 4))])
def test_group_normalization(kwargs, shape):
    _compare_layer(keras.layers.GroupNormalization(**kwargs),
                   layers.GroupNormalization(**kwargs), _x(*shape))


def test_group_normalization_sgd_step():
    _sgd_step(lambda lib: lib.layers.GroupNormalization(groups=2), _x(5, 4), _x(5, 3, seed=5))


@pytest.mark.parametrize("axis,shape", [(-1, (3, 4)), ([1, 2], (2, 3, 4)), (1, (2, 3, 4))])
def test_unit_normalization(axis, shape):
    x = _x(*shape)
    x[0] = 0.0
    np.testing.assert_allclose(layers.UnitNormalization(axis=axis)(x),
                               to_np(keras.layers.UnitNormalization(axis=axis)(x)), rtol=RTOL,
                               atol=ATOL)


def test_unit_normalization_sgd_step():
    _sgd_step(lambda lib: lib.layers.UnitNormalization(), _x(5, 4), _x(5, 3, seed=5))


# ---- regularization ----

def test_activity_regularization_sgd_step():
    _sgd_step(lambda lib: lib.layers.ActivityRegularization(l1=0.01, l2=0.02), _x(5, 4),
              _x(5, 3, seed=5))


@pytest.mark.parametrize("name,args", [("Dropout", (0.5,)), ("SpatialDropout1D", (0.5,)),
                                       ("GaussianNoise", (0.5,)), ("GaussianDropout", (0.5,)),
                                       ("AlphaDropout", (0.5,)), ("ActivityRegularization", ())])
def test_identity_in_inference_and_configs(name, args):
    x = _x(2, 3, 4)
    k_layer, f_layer = getattr(keras.layers, name)(*args), getattr(layers, name)(*args)
    np.testing.assert_array_equal(f_layer(x), to_np(k_layer(x)))
    k_config, f_config = k_layer.get_config(), f_layer.get_config()
    for key in k_config:
        if key in ("dtype", "name"):
            continue
        assert key in f_config, key
        if not isinstance(k_config[key], dict):
            assert f_config[key] == k_config[key] or (
                k_config[key] is not None and tuple(f_config[key]) == tuple(k_config[key])), key


@pytest.mark.parametrize("name,kwargs", [
    ("BatchNormalization", dict(renorm=True, renorm_clipping={"rmax": 2.0})),
    ("LayerNormalization", dict(axis=[1, 2])), ("GroupNormalization", dict(groups=4)),
    ("UnitNormalization", dict(axis=[1, 2])), ("SpatialDropout2D", dict(rate=0.2)),
])
def test_config_keys_cover_keras(name, kwargs):
    k_config = getattr(keras.layers, name)(**kwargs).get_config()
    f_config = getattr(layers, name)(**kwargs).get_config()
    for key, value in k_config.items():
        if key in ("dtype", "name"):
            continue
        assert key in f_config, key
        if isinstance(value, (int, float, bool, str, list)) or value is None:
            assert f_config[key] == value, (key, f_config[key], value)
