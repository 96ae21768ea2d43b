"""Dense: every Keras 3 argument, rank > 2 inputs, values and gradients against NumPy float64,
activity regularization, LoRA, errors."""

import pathlib
import sys

import numpy as np
import pytest
from layer_testing import run_layer_test

import fkeras
from fkeras import layers

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "ops"))
from op_testing import fd_check  # noqa: E402


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("kwargs,in_shape,out_shape,n_losses", [
    ({"units": 4}, (3, 5), (3, 4), 0),
    ({"units": 4, "activation": "relu", "use_bias": False}, (3, 5), (3, 4), 0),
    ({"units": 2, "activation": "softmax"}, (2, 3, 5), (2, 3, 2), 0),
    ({"units": 3, "kernel_initializer": "he_normal", "bias_initializer": "ones",
      "kernel_regularizer": "l2", "bias_regularizer": "l1", "kernel_constraint": "max_norm",
      "bias_constraint": "non_neg"}, (3, 5), (3, 3), 2),
    ({"units": 3, "activity_regularizer": "l2"}, (3, 5), (3, 3), 1),
    ({"units": 3, "lora_rank": 2}, (2, 4, 5), (2, 4, 3), 0),
])
def test_catalogue_checks(kwargs, in_shape, out_shape, n_losses):
    n_weights = 1 + int(kwargs.get("use_bias", True)) + (2 if "lora_rank" in kwargs else 0)
    frozen = 1 if "lora_rank" in kwargs else 0
    run_layer_test(layers.Dense, kwargs, input_shape=in_shape, expected_output_shape=out_shape,
                   expected_num_trainable_weights=n_weights - 2 * frozen + frozen,
                   expected_num_non_trainable_weights=frozen, expected_num_losses=n_losses,
                   supports_masking=True,
                   # LoRA: B starts at zero, so A gets a zero gradient on the first step (as in
                   # Keras); test_lora checks training instead.
                   run_training_check="lora_rank" not in kwargs)


def test_rank_3_and_4_inputs_act_on_the_last_axis():
    for shape in [(2, 3, 5), (2, 3, 4, 5)]:
        x = _x(*shape)
        layer = layers.Dense(4, activation="tanh", bias_initializer="random_normal")
        y = layer(x)
        k, b = (w.astype(np.float64) for w in layer.get_weights())
        assert tuple(layer.kernel.shape) == (5, 4)
        np.testing.assert_allclose(y, np.tanh(np.tensordot(x.astype(np.float64), k, 1) + b),
                                   rtol=1e-5, atol=1e-6)


def test_gradients_against_finite_differences():
    layer = layers.Dense(3, activation="sigmoid", bias_initializer="random_normal")
    x = _x(2, 4, 5).astype(np.float64)
    layer.build(x.shape)
    k, b = (w.astype(np.float64) for w in layer.get_weights())

    def fn(xx, kk, bb):
        from fkeras import ops
        return ops.sigmoid(ops.dense(xx, kk, bb))

    fd_check(fn, [x, k, b], wrt=(0, 1, 2), rng=np.random.default_rng(0))


def test_activity_regularizer_is_divided_by_the_batch_size():
    layer = layers.Dense(3, activity_regularizer=fkeras.regularizers.L2(0.1))
    x = _x(5, 4)
    y = np.asarray(layer(x), np.float64)
    assert len(layer.losses) == 1
    np.testing.assert_allclose(float(layer.losses[0]), 0.1 * np.sum(y * y) / 5, rtol=1e-5)
    layer(x)
    assert len(layer.losses) == 1  # a second eager call replaces the term
    # In fit, the term enters the loss: with a zero target and MSE the gradient is visible.
    inp = fkeras.Input(shape=(4,))
    model = fkeras.Model(inp, layers.Dense(3, activity_regularizer="l2",
                                           kernel_initializer="ones")(inp))
    model.compile(optimizer="sgd", loss="mse")
    logs = model.evaluate(x, np.zeros((5, 3), np.float32), verbose=0, return_dict=True)
    out = x.astype(np.float64).sum(1, keepdims=True) * np.ones((1, 3))
    np.testing.assert_allclose(logs["loss"], np.mean(out ** 2) + 0.01 * np.sum(out ** 2) / 5,
                               rtol=1e-4)


def test_lora():
    layer = layers.Dense(3, lora_rank=2, lora_alpha=4)
    x = _x(6, 5)
    layer.build(x.shape)
    assert [w.path for w in layer.weights] == ["dense/kernel", "dense/bias",
                                               "dense/lora_kernel_a", "dense/lora_kernel_b"]
    assert [w.path for w in layer.non_trainable_weights] == ["dense/kernel"]
    k, b, a, bb = (w.astype(np.float64) for w in layer.get_weights())
    assert np.all(bb == 0)  # B starts at zero: the layer starts as the frozen kernel
    bb = np.random.default_rng(1).standard_normal(bb.shape)
    layer.set_weights([k, b, a, bb])
    np.testing.assert_allclose(layer(x), x @ (k + 2.0 * a @ bb) + b, rtol=1e-5, atol=1e-5)
    # One SGD step in a model: B (and A, now that B != 0) and the bias move, the kernel not.
    inp = fkeras.Input(shape=(5,))
    model = fkeras.Model(inp, layer(inp))
    model.compile(optimizer="sgd", loss="mse")
    before = [np.array(w) for w in layer.weights]
    model.train_on_batch(x, _x(6, 3, seed=2))
    moved = [not np.array_equal(np.array(w), b) for w, b in zip(layer.weights, before)]
    assert moved == [False, True, True, True]
    config = layer.get_config()
    assert (config["lora_rank"], config["lora_alpha"]) == (2, 4)
    with pytest.raises(ValueError, match="lora is already enabled"):
        layer.enable_lora(2)
    with pytest.raises(ValueError, match="Lora is incompatible with kernel constraints"):
        layers.Dense(3, lora_rank=2, kernel_constraint="non_neg")(x)
    with pytest.raises(ValueError, match="Invalid `lora_rank`"):
        layers.Dense(3, lora_rank=0)


def test_config_keys_are_keras_keys():
    config = layers.Dense(3, name="d").get_config()
    for key in ("name", "trainable", "dtype", "units", "activation", "use_bias",
                "kernel_initializer", "bias_initializer", "kernel_regularizer",
                "bias_regularizer", "kernel_constraint", "bias_constraint",
                "quantization_config"):
        assert key in config
    assert "lora_rank" not in config


def test_errors():
    for bad in (0, -3, 2.5, True, None):
        with pytest.raises(ValueError, match="Received an invalid value for `units`, expected "
                                             "a positive integer"):
            layers.Dense(bad)
    with pytest.raises(ValueError, match="The last dimension of the inputs to a Dense layer "
                                         "should be defined"):
        layers.Dense(3)(fkeras.Input(shape=(None,)))
    with pytest.raises(ValueError, match='Input 0 of layer "d" is incompatible with the layer: '
                                         "expected min_ndim=2, found ndim=1"):
        layers.Dense(3, name="d")(np.ones((4,), np.float32))
    layer = layers.Dense(3, name="e")
    layer(_x(2, 4))
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 4"):
        layer(_x(2, 5))
    with pytest.raises(ValueError, match="Unknown quantization config"):
        layers.Dense(3, quantization_config={"mode": "int8"})  # not a serialized config
