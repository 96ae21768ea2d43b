"""ReLU, LeakyReLU, PReLU, ELU, Softmax and Activation: the catalogue checks, values against
NumPy float64 formulas, arguments and Keras's error texts."""

import warnings

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


@pytest.mark.parametrize("cls,kwargs", [
    (layers.ReLU, {}),
    (layers.ReLU, {"max_value": 1.0, "negative_slope": 0.1, "threshold": 0.2}),
    (layers.ReLU, {"negative_slope": 0.2}),
    (layers.LeakyReLU, {}),
    (layers.LeakyReLU, {"negative_slope": 0.1}),
    (layers.ELU, {"alpha": 0.5}),
    (layers.Softmax, {}),
    (layers.Softmax, {"axis": 1}),
    (layers.Softmax, {"axis": [1, 2]}),
    (layers.Activation, {"activation": "tanh"}),
])
def test_catalogue_checks_weightless(cls, kwargs):
    run_layer_test(cls, kwargs, input_shape=(2, 3, 4), expected_output_shape=(2, 3, 4),
                   expected_num_trainable_weights=0, expected_num_non_trainable_weights=0,
                   supports_masking=True, run_training_check=False)


@pytest.mark.parametrize("kwargs,alpha_shape", [
    ({}, (3, 4)),
    ({"shared_axes": [1]}, (1, 4)),
    ({"shared_axes": 2, "alpha_initializer": "ones"}, (3, 1)),
    ({"alpha_regularizer": "l2", "alpha_constraint": "non_neg"}, (3, 4)),
])
def test_prelu_catalogue_checks(kwargs, alpha_shape):
    run_layer_test(layers.PReLU, kwargs, input_shape=(2, 3, 4), expected_output_shape=(2, 3, 4),
                   expected_num_trainable_weights=1, expected_num_non_trainable_weights=0,
                   supports_masking=True)
    layer = layers.PReLU(**kwargs)
    layer(_x(2, 3, 4))
    assert tuple(layer.alpha.shape) == alpha_shape


@pytest.mark.parametrize("kwargs", [
    {}, {"max_value": 6.0}, {"negative_slope": 0.2}, {"threshold": 0.5},
    {"max_value": 1.0, "negative_slope": 0.1, "threshold": 0.2}])
def test_relu_values(kwargs):
    x = np.linspace(-3, 8, 45, dtype=np.float32).reshape(5, 9)
    m = kwargs.get("max_value", np.inf)
    s, t = kwargs.get("negative_slope", 0.0), kwargs.get("threshold", 0.0)
    xd = x.astype(np.float64)
    # Keras 3's implementation (x == threshold gives 0, as its code does, not its docstring).
    want = np.where(xd > t, np.minimum(xd, m), s * (xd - t))
    np.testing.assert_allclose(layers.ReLU(**kwargs)(x), want, rtol=1e-6, atol=1e-6)


def test_relu_errors():
    for kwargs, text in [({"max_value": -1.0}, "max_value of a ReLU layer cannot be a negative "
                          "value. Received: max_value=-1.0"),
                         ({"negative_slope": -0.1}, "negative_slope of a ReLU layer cannot be "
                          "None or a negative value. Received: negative_slope=-0.1"),
                         ({"threshold": None}, "threshold of a ReLU layer cannot be None or a "
                          "negative value. Received: threshold=None")]:
        with pytest.raises(ValueError) as info:
            layers.ReLU(**kwargs)
        assert str(info.value) == text


def test_leaky_relu_values_alpha_alias_and_errors():
    x = np.array([[-2.0, -0.5, 0.0, 3.0]], np.float32)
    np.testing.assert_allclose(layers.LeakyReLU()(x), [[-0.6, -0.15, 0.0, 3.0]], rtol=1e-6)
    with pytest.warns(UserWarning, match="Argument `alpha` is deprecated"):
        layer = layers.LeakyReLU(alpha=0.5)
    assert layer.negative_slope == 0.5
    assert "alpha" not in layer.get_config()
    np.testing.assert_allclose(layer(x), [[-1.0, -0.25, 0.0, 3.0]], rtol=1e-6)
    with pytest.raises(ValueError, match="The negative_slope value of a Leaky ReLU layer cannot "
                                         "be None or negative value"):
        layers.LeakyReLU(negative_slope=-1)


def test_elu_values():
    x = np.array([[-2.0, -0.5, 0.0, 3.0]], np.float32)
    want = np.where(x > 0, x, 0.7 * np.expm1(x.astype(np.float64)))
    np.testing.assert_allclose(layers.ELU(alpha=0.7)(x), want, rtol=1e-6, atol=1e-7)
    assert layers.ELU(alpha=0.7).get_config()["alpha"] == 0.7


def test_prelu_values_and_gradient_of_alpha():
    x = _x(4, 3, 2)
    layer = layers.PReLU(alpha_initializer="ones", shared_axes=[1])
    layer.build(x.shape)
    alpha = np.random.default_rng(1).uniform(0.1, 0.5, (1, 2)).astype(np.float32)
    layer.set_weights([alpha])
    np.testing.assert_allclose(layer(x), np.where(x > 0, x, alpha * x), rtol=1e-6)
    cot = _x(4, 3, 2, seed=3)
    with fkeras.GradientTape() as tape:
        y = layer(x)
    (g,) = tape.gradient(y, layer.trainable_weights, output_gradients=cot)
    np.testing.assert_allclose(g, np.sum(cot * np.minimum(x, 0), axis=(0, 1))[None, :],
                               rtol=1e-5)


def test_prelu_errors_and_input_spec():
    with pytest.raises(ValueError, match="Invalid `shared_axes` for layer \"p\""):
        layers.PReLU(shared_axes=[0], name="p")
    with pytest.raises(ValueError, match="axis 3 is out of range"):
        layers.PReLU(shared_axes=[3])(fkeras.Input(shape=(4, 5)))
    with pytest.raises(ValueError, match="fully-defined"):
        layers.PReLU()(fkeras.Input(shape=(None, 5)))
    assert layers.PReLU(shared_axes=1)(fkeras.Input(shape=(None, 5))).shape == (None, None, 5)
    layer = layers.PReLU()
    layer(_x(2, 4))
    with pytest.raises(ValueError, match="expected axis 1 of input shape to have value 4"):
        layer(_x(2, 5))


@pytest.mark.parametrize("axis", [-1, 1, [1, 2], (0, 2)])
def test_softmax_values(axis):
    x = _x(2, 3, 4).astype(np.float64)
    ax = tuple(axis) if isinstance(axis, (list, tuple)) else axis
    e = np.exp(x - x.max(axis=ax, keepdims=True))
    want = e / e.sum(axis=ax, keepdims=True)
    np.testing.assert_allclose(layers.Softmax(axis=axis)(x.astype(np.float32)), want,
                               rtol=1e-5, atol=1e-7)


def test_softmax_mask_and_multi_axis_gradient():
    x = _x(2, 3, 4)
    mask = np.array([[1, 1, 0, 1]], bool)
    y = np.asarray(layers.Softmax()(x, mask=mask))
    assert np.all(y[..., 2] == 0)
    keep = x[..., [0, 1, 3]].astype(np.float64)
    e = np.exp(keep - keep.max(-1, keepdims=True))
    np.testing.assert_allclose(y[..., [0, 1, 3]], e / e.sum(-1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(layers.Softmax()(x, mask=mask.astype(np.float32)), y)
    with pytest.raises(ValueError, match="The `mask` must be broadcastable to `inputs`. Each"):
        layers.Softmax()(x, mask=np.ones((3, 3), bool))
    with pytest.raises(ValueError, match="must not have more dimensions"):
        layers.Softmax()(x, mask=np.ones((1, 2, 3, 4), bool))
    # The multi-axis path is built from differentiable ops: check its gradient.
    
    xs = x.astype(np.float64)
    fd_check(lambda t: layers.Softmax(axis=[1, 2])(t), [xs], wrt=(0,),
             rng=np.random.default_rng(0))
    fd_check(lambda t: layers.Softmax()(t, mask=mask), [xs], wrt=(0,),
             rng=np.random.default_rng(1))


def test_softmax_axis_errors():
    with pytest.raises(ValueError, match='Invalid `axis` for layer "s": axis 3 is out of range'):
        layers.Softmax(axis=3, name="s")(_x(2, 3, 4))
    with pytest.raises(ValueError, match="expected an int or a list of ints"):
        layers.Softmax(axis="last")
    assert layers.Softmax(axis=1)(fkeras.Input(shape=(3, 4))).shape == (None, 3, 4)
    assert layers.Softmax(axis=[1, 2])(fkeras.Input(shape=(3, 4))).shape == (None, 3, 4)


def test_activation_layer_errors_and_config():
    with pytest.raises(ValueError, match="Could not interpret activation function identifier"):
        layers.Activation("foo")
    layer = layers.Activation("relu", name="a")
    assert layer.get_config()["activation"] == "relu"
    assert layers.Activation.from_config(layer.get_config()).activation is \
        fkeras.activations.relu


def test_activation_layers_in_a_model_train():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        inp = fkeras.Input(shape=(6,))
        h = layers.Dense(8)(inp)
        h = layers.PReLU()(h)
        h = layers.ReLU(max_value=4.0, negative_slope=0.1)(h)
        h = layers.ELU()(layers.LeakyReLU()(h))
        out = layers.Softmax()(layers.Dense(3)(h))
        model = fkeras.Model(inp, out)
        model.compile(optimizer="sgd", loss="categorical_crossentropy")
        y = np.eye(3, dtype=np.float32)[np.arange(16) % 3]
        hist = model.fit(_x(16, 6), y, epochs=2, verbose=0)
    assert np.all(np.isfinite(hist.history["loss"]))
