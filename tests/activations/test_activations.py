"""fkeras.activations: every public name of keras.activations, values vs real Keras, lookups by
name (Activation layer, `activation=` strings), serialize/deserialize, gradients."""

import numpy as np
import pytest

import fkeras
from fkeras import activations, layers

NAMES = ["celu", "elu", "exponential", "gelu", "glu", "hard_shrink", "hard_sigmoid",
         "hard_silu", "hard_swish", "hard_tanh", "leaky_relu", "linear", "log_sigmoid",
         "log_softmax", "mish", "relu", "relu6", "selu", "sigmoid", "silu", "soft_shrink",
         "softmax", "softplus", "softsign", "sparse_plus", "sparse_sigmoid", "sparsemax",
         "squareplus", "swish", "tanh", "tanh_shrink"]
X = np.linspace(-4.2, 4.1, 24, dtype=np.float32).reshape(4, 6)


def test_every_keras_activation_name_exists():
    keras = pytest.importorskip("keras")
    public = {n for n in dir(keras.activations) if not n.startswith("_")}
    missing = sorted(n for n in public if not hasattr(activations, n))
    assert missing == []


@pytest.mark.parametrize("name", NAMES)
def test_values_match_keras(name):
    keras = pytest.importorskip("keras")
    if name == "sparsemax":
        pytest.skip("Keras 3.15's sparsemax is not the simplex projection "
                    "(tests/ops/test_activation_ops.py, docs/keras_compatibility.md)")
    ours = np.asarray(getattr(activations, name)(X))
    theirs = keras.ops.convert_to_numpy(getattr(keras.activations, name)(X))
    np.testing.assert_allclose(ours, theirs, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("kwargs", [dict(max_value=6.0), dict(negative_slope=0.1),
                                    dict(threshold=1.0), dict(negative_slope=0.2, max_value=2.0,
                                                              threshold=-1.0)])
def test_relu_options_match_keras(kwargs):
    keras = pytest.importorskip("keras")
    np.testing.assert_allclose(np.asarray(activations.relu(X, **kwargs)),
                               keras.ops.convert_to_numpy(keras.activations.relu(X, **kwargs)),
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_by_name_in_layers_and_round_trip(name):
    fn = activations.get(name)
    assert fn is getattr(activations, name)
    assert activations.get(activations.serialize(fn)) is activations.get(
        {"swish": "silu", "hard_swish": "hard_silu"}.get(name, name))
    assert activations.deserialize(name) is fn
    assert activations.deserialize({"module": "keras.activations", "class_name": "function",
                                    "config": name, "registered_name": "function"}) is fn
    x = X[:, :6]
    np.testing.assert_allclose(np.asarray(layers.Activation(name)(x)), np.asarray(fn(x)),
                               rtol=1e-6)
    if name != "glu":  # glu halves the last axis
        dense = layers.Dense(6, activation=name)
        y = dense(x)
        ref = fn(fkeras.ops.add(fkeras.ops.matmul(x, dense.kernel), dense.bias))
        np.testing.assert_allclose(np.asarray(y), np.asarray(ref), rtol=1e-5, atol=1e-6)
        assert dense.get_config()["activation"] == activations.serialize(fn)


def test_activation_layer_config_matches_keras_names():
    keras = pytest.importorskip("keras")
    for name in ("relu6", "hard_swish", "mish", "swish"):
        assert layers.Activation(name).get_config()["activation"] == \
            keras.layers.Activation(name).get_config()["activation"]


def test_unknown_names_and_custom_objects():
    with pytest.raises(ValueError, match="Could not interpret"):
        activations.get("relu7")

    def my_act(x):
        return x * 2.0

    assert activations.serialize(my_act) == "my_act"
    np.testing.assert_allclose(
        np.asarray(activations.deserialize("my_act", custom_objects={"my_act": my_act})(X)), 2 * X)


@pytest.mark.parametrize("kwargs", [dict(max_value=2.5), dict(negative_slope=0.1, threshold=0.5),
                                    dict(negative_slope=0.2, max_value=2.0, threshold=-1.0)])
def test_relu_options_gradient(kwargs):
    from op_testing import fd_check

    x = np.linspace(-3.05, 3.1, 12)
    fd_check(lambda t: activations.relu(t, **kwargs), [x], [0], np.random.default_rng(0))
