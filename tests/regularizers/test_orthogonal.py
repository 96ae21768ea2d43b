"""OrthogonalRegularizer: value against a float64 reference, gradient against finite
differences, Keras 3 parity (value, config), as a kernel_regularizer in fit, errors."""

import numpy as np
import pytest

import fkeras
from fkeras import regularizers


def ref(w, factor, mode):
    w = w.astype(np.float64)
    if mode == "columns":
        w = w.T
    u = w / np.linalg.norm(w, axis=1, keepdims=True)
    p = u @ u.T
    n = p.shape[0]
    return factor * 0.5 * np.abs(p * (1 - np.eye(n))).sum() / (n * (n - 1) / 2)


CASES = [((4, 6), 0.01, "rows"), ((5, 3), 0.2, "columns"), ((3, 3), 1.0, "rows")]


@pytest.mark.parametrize("shape,factor,mode", CASES)
def test_value_and_gradient(shape, factor, mode):
    w = np.random.default_rng(0).standard_normal(shape).astype("float32")
    reg = regularizers.OrthogonalRegularizer(factor, mode)
    np.testing.assert_allclose(float(np.asarray(reg(w))), ref(w, factor, mode), rtol=1e-5)
    v = fkeras.Variable(w)
    with fkeras.GradientTape() as tape:
        loss = reg(v)
    g = np.asarray(tape.gradient(loss, v), np.float64)
    d = np.random.default_rng(1).standard_normal(shape)
    h = 1e-5
    fd = (ref(w + h * d, factor, mode) - ref(w - h * d, factor, mode)) / (2 * h)
    np.testing.assert_allclose((g * d).sum(), fd, rtol=2e-3, atol=1e-7)


@pytest.mark.parametrize("shape,factor,mode", CASES)
def test_against_keras(shape, factor, mode):
    keras = pytest.importorskip("keras")
    torch = pytest.importorskip("torch")  # Keras's NumPy path mishandles axis=0 (`axis or -1`)
    w = np.random.default_rng(2).standard_normal(shape).astype("float32")
    k = keras.regularizers.OrthogonalRegularizer(factor, mode)
    f = regularizers.get(keras.regularizers.serialize(k))
    assert f.get_config() == k.get_config()
    np.testing.assert_allclose(float(np.asarray(f(w))), float(k(torch.tensor(w))), rtol=1e-5)


def test_in_a_layer_trains():
    x = np.random.default_rng(3).standard_normal((16, 4)).astype("float32")
    model = fkeras.Sequential([fkeras.Input((4,)), fkeras.layers.Dense(
        3, kernel_regularizer=regularizers.orthogonal_regularizer(0.5, "columns"))])
    model.compile("sgd", "mse")
    loss0 = model.evaluate(x, x[:, :3], verbose=0)
    penalty = float(np.asarray(model.layers[0].kernel_regularizer(model.layers[0].kernel)))
    assert penalty > 0
    out = model(x).numpy()
    np.testing.assert_allclose(loss0, np.mean((out - x[:, :3]) ** 2) + penalty, rtol=1e-5)


@pytest.mark.parametrize("kwargs,match", [({"factor": -1.0}, "non-negative float"),
                                          ({"mode": "diag"}, "Invalid value for argument `mode`")])
def test_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        regularizers.OrthogonalRegularizer(**kwargs)
    with pytest.raises(ValueError, match="must have rank 2"):
        regularizers.OrthogonalRegularizer()(np.ones((2, 2, 2), "float32"))
