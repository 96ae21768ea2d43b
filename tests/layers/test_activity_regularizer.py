"""activity_regularizer on any layer (Keras 3: regularizer(output) / batch size, added to the
losses after each eager call), and losses cleared at the start of each entry call."""

import numpy as np
import pytest

import fkeras
from fkeras import layers, regularizers


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_dense_activity_loss_value_and_reset():
    layer = layers.Dense(3, activity_regularizer=regularizers.L1L2(l1=0.1, l2=0.2))
    x = _x(4, 5)
    y = np.asarray(layer(x), np.float64)
    expected = (0.1 * np.abs(y).sum() + 0.2 * (y ** 2).sum()) / 4
    assert len(layer.losses) == 1
    np.testing.assert_allclose(float(np.asarray(layer.losses[0])), expected, rtol=1e-5)
    layer(x)  # a new entry call replaces, not appends
    assert len(layer.losses) == 1


def test_activity_regularization_layer_in_model_resets_per_call():
    inputs = fkeras.Input((5,))
    out = layers.ActivityRegularization(l2=0.5)(layers.Dense(3)(inputs))
    model = fkeras.Model(inputs, out)
    for _ in range(3):
        model(_x(2, 5))
    assert len(model.losses) == 1
    model.predict(_x(8, 5), verbose=0)
    model.evaluate(_x(8, 5), _x(8, 3), verbose=0) if model.compiled_loss else None
    assert len(model.losses) <= 1


def test_activity_loss_joins_training_loss():
    """The fit loss is mse + the activity term, so an all-zero target with a huge l2 shrinks
    the Dense output faster than without the regularizer."""
    def run(reg):
        fkeras.utils.set_random_seed(1)
        inputs = fkeras.Input((5,))
        model = fkeras.Model(inputs, layers.Dense(3, activity_regularizer=reg)(inputs))
        model.compile(optimizer=fkeras.optimizers.SGD(0.01), loss="mse")
        x, y = _x(16, 5), np.zeros((16, 3), np.float32)
        loss0 = model.evaluate(x, y, verbose=0)
        model.fit(x, y, epochs=1, batch_size=16, verbose=0)
        return loss0, model.layers[1].kernel.numpy().copy()
    plain_loss, plain_w = run(None)
    reg_loss, reg_w = run(regularizers.L2(1.0))
    assert reg_loss > plain_loss  # evaluate includes the activity term
    assert not np.allclose(plain_w, reg_w)


def test_same_as_keras_one_sgd_step():
    keras = pytest.importorskip("keras")
    x, y = _x(8, 5), _x(8, 3, seed=1)
    k_in = keras.Input((5,))
    k_model = keras.Model(k_in, keras.layers.Dense(
        3, activity_regularizer=keras.regularizers.L1L2(0.01, 0.02))(k_in))
    f_in = fkeras.Input((5,))
    f_model = fkeras.Model(f_in, layers.Dense(
        3, activity_regularizer=regularizers.L1L2(0.01, 0.02))(f_in))
    f_model.set_weights(k_model.get_weights())
    k_model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    f_model.compile(optimizer=fkeras.optimizers.SGD(0.1), loss="mse")
    k_loss = k_model.train_on_batch(x, y)
    f_loss = f_model.train_on_batch(x, y)
    np.testing.assert_allclose(f_loss, k_loss, rtol=1e-5)
    for a, b in zip(f_model.get_weights(), k_model.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("alias, cls, kwargs", [
    ("l1", "L1", dict(l1=0.1)), ("l2", "L2", dict(l2=0.1)), ("l1_l2", "L1L2", dict(l1=0.1, l2=0.2)),
])
def test_lowercase_regularizer_names_are_the_classes(alias, cls, kwargs):
    """Keras 3 exports `regularizers.l2` etc. as the classes (`kernel_regularizer=l2(1e-3)`)."""
    reg = getattr(fkeras.regularizers, alias)(**kwargs)
    assert isinstance(reg, getattr(fkeras.regularizers, cls))
    w = np.array([[1.0, -2.0], [3.0, 0.5]], "float32")
    expected = kwargs.get("l1", 0.0) * np.abs(w).sum() + kwargs.get("l2", 0.0) * (w ** 2).sum()
    np.testing.assert_allclose(float(reg(w)), expected, rtol=1e-6)
