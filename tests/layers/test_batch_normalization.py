"""BatchNormalization: axis meaning (kept axes), training and inference formulas, moving
statistics (Keras 3 rule, biased variance), trainable=False, weights, config, errors."""

import numpy as np
import pytest
from layer_refs import batch_norm

import fkeras
from fkeras import layers


@pytest.mark.parametrize("shape,axis,kept", [((6, 5), -1, (1,)), ((3, 4, 2, 5), 1, (1,)),
                                             ((3, 4, 2, 5), -2, (2,)),
                                             ((3, 4, 2, 5), [1, 2], (1, 2)),
                                             ((3, 4, 2, 5), [1, -1], (1, 3))])
def test_training_and_inference_match_the_formula(shape, axis, kept):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 2 + 3).astype(np.float32)
    layer = layers.BatchNormalization(axis=axis, momentum=0.8, epsilon=1e-2)
    layer.build(shape)
    pshape = layer.gamma.shape
    gamma, beta = rng.standard_normal(pshape), rng.standard_normal(pshape)
    mm, mv = rng.standard_normal(pshape), rng.uniform(0.5, 2, pshape)
    layer.set_weights([gamma, beta, mm, mv])

    y = layer(x)  # training defaults to inference
    want, _, _ = batch_norm(x, kept, gamma, beta, mm, mv, epsilon=1e-2)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)

    y = layer(x, training=True)
    want, mean, var = batch_norm(x, kept, gamma, beta, epsilon=1e-2)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(layer.moving_mean.numpy(),
                               mm * 0.8 + mean.reshape(pshape) * 0.2, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(layer.moving_variance.numpy(),
                               mv * 0.8 + var.reshape(pshape) * 0.2, rtol=1e-5, atol=1e-6)


def test_param_shapes_and_weight_order():
    layer = layers.BatchNormalization()
    layer(fkeras.Input(shape=(8, 8, 16)))
    assert [w.name for w in layer.weights] == ["gamma", "beta", "moving_mean", "moving_variance"]
    assert [w.shape for w in layer.weights] == [(16,)] * 4
    assert [w.name for w in layer.trainable_weights] == ["gamma", "beta"]
    assert layer.count_params() == 64
    np.testing.assert_array_equal(layer.moving_variance.numpy(), 1.0)
    # Keras 2: a list of kept axes gives parameters the broadcast shape.
    layer = layers.BatchNormalization(axis=[1, 2])
    layer.build((2, 3, 4, 5))
    assert layer.gamma.shape == (1, 3, 4, 1)
    layer = layers.BatchNormalization(center=False, scale=False)
    layer.build((2, 3))
    assert [w.name for w in layer.weights] == ["moving_mean", "moving_variance"]
    np.testing.assert_allclose(layer(np.array([[1.0, 2, 3]], np.float32)),
                               [[1, 2, 3] / np.sqrt(1 + 1e-3)], rtol=1e-6)


def test_momentum_zero_stores_the_biased_batch_variance():
    x = np.random.default_rng(1).standard_normal((10, 3)).astype(np.float32)
    layer = layers.BatchNormalization(momentum=0.0)
    layer(x, training=True)
    np.testing.assert_allclose(layer.moving_variance.numpy(), x.var(axis=0), rtol=1e-5)
    np.testing.assert_allclose(layer.moving_mean.numpy(), x.mean(axis=0), rtol=1e-5, atol=1e-6)


def test_trainable_false_means_inference_mode():
    x = np.random.default_rng(2).standard_normal((8, 3)).astype(np.float32) + 5
    layer = layers.BatchNormalization(trainable=False)
    y = layer(x, training=True)
    np.testing.assert_allclose(y, x / np.sqrt(1 + 1e-3), rtol=1e-6)
    np.testing.assert_array_equal(layer.moving_mean.numpy(), 0.0)
    assert layer.trainable_weights == []


def test_model_training_argument_reaches_the_layer():
    x = np.random.default_rng(3).standard_normal((16, 4)).astype(np.float32) * 3 + 2
    inp = fkeras.Input(shape=(4,))
    model = fkeras.Model(inp, layers.BatchNormalization(momentum=0.0)(inp))
    np.testing.assert_allclose(model.predict(x, verbose=0), x / np.sqrt(1 + 1e-3), rtol=1e-5)
    y = model(x, training=True)
    np.testing.assert_allclose(np.asarray(y).mean(axis=0), 0.0, atol=1e-5)
    np.testing.assert_allclose(model.layers[-1].moving_mean.numpy(), x.mean(axis=0), rtol=1e-5)


def test_gradients_in_training_mode():
    rng = np.random.default_rng(4)
    layer = layers.BatchNormalization()
    x = rng.standard_normal((6, 3)).astype(np.float32)
    with fkeras.GradientTape() as tape:
        tape.watch(x)
        y = layer(x, training=True)
    cot = rng.standard_normal((6, 3)).astype(np.float32)
    dx, dg, db = tape.gradient(y, [x] + layer.trainable_weights, output_gradients=cot)
    xhat = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-3)
    np.testing.assert_allclose(db, cot.sum(0), rtol=1e-5)
    np.testing.assert_allclose(dg, (cot * xhat).sum(0), rtol=1e-4, atol=1e-5)
    want = (cot - cot.mean(0) - xhat * (cot * xhat).mean(0)) / np.sqrt(x.var(0) + 1e-3)
    np.testing.assert_allclose(dx, want, rtol=1e-4, atol=1e-5)


def test_config_round_trip_keeps_every_argument():
    layer = layers.BatchNormalization(axis=[1, -1], momentum=0.9, epsilon=1e-5, center=False,
                                      gamma_initializer="random_normal", beta_regularizer="l2",
                                      synchronized=True, fused=False, name="bn")
    config = layer.get_config()
    for key in ("axis", "momentum", "epsilon", "center", "scale", "beta_initializer",
                "gamma_initializer", "moving_mean_initializer", "moving_variance_initializer",
                "beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint",
                "synchronized", "renorm", "renorm_clipping", "renorm_momentum", "fused",
                "virtual_batch_size", "adjustment"):
        assert key in config
    assert config["axis"] == [1, -1] and config["momentum"] == 0.9
    assert layers.BatchNormalization.from_config(config).get_config() == config


@pytest.mark.parametrize("kwargs,match", [
    (dict(renorm=True, renorm_clipping={"foo": 1}),
     r"Received invalid keys for `renorm_clipping` argument: \{'foo': 1\}. Supported values: "
     r"\['rmax', 'rmin', 'dmax'\]."),
    (dict(renorm=True, renorm_clipping={"rmax": 1, "rmin": 2}), "rmax should be greater"),
    (dict(renorm=True, renorm_clipping={"dmax": -1}), "dmax should be non-negative"),
    (dict(virtual_batch_size=0), "`virtual_batch_size` must be a positive integer"),
    (dict(virtual_batch_size=2, adjustment=lambda s: (1, 0)),
     "When using `virtual_batch_size`, adjustment cannot be specified"),
    (dict(adjustment=3), "`adjustment` must be a callable"),
    (dict(fused=True, renorm=True), "Passing both `fused=True` and `renorm=True`"),
    (dict(fused=True, virtual_batch_size=2), "`fused=True` is not supported when "
                                             "`virtual_batch_size`"),
    (dict(fused=True, adjustment=lambda s: (1, 0)), "`fused=True` is not supported when "
                                                    "`adjustment`"),
    (dict(fused="yes"), "`fused` must be None, True or False"),
])
def test_invalid_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        layers.BatchNormalization(**kwargs)


def test_axis_errors():
    with pytest.raises(ValueError) as info:
        layers.BatchNormalization(axis=3)(fkeras.Input(shape=(4,)))
    assert str(info.value) == ("Invalid value for `axis` argument. Expected 0 <= axis < "
                               "inputs.rank (with inputs.rank=2). Received: axis=3")
    with pytest.raises(ValueError, match="Input has undefined `axis` dimension"):
        layers.BatchNormalization()(fkeras.Input(shape=(3, None)))
    layer = layers.BatchNormalization(name="bn")
    layer(fkeras.Input(shape=(5, 3)))
    with pytest.raises(ValueError, match='Input 0 of layer "bn" is incompatible with the '
                                         "layer: expected ndim=3, found ndim=2"):
        layer(fkeras.Input(shape=(3,)))
