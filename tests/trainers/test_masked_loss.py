"""Keras 3 weights losses and metrics by the mask of the model's output: masked time steps
count for nothing, and the mean runs over the valid steps only."""

import numpy as np
import pytest

import fkeras
from fkeras import layers


def _data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((3, 6, 4)).astype(np.float32)
    x[0, 4:] = 0.0
    x[1, :2] = 0.0
    x[2, 2:4] = 0.0
    y = rng.standard_normal((3, 6, 3)).astype(np.float32)
    return x, y


def _model(L, mod, x):
    inputs = mod.Input(batch_shape=x.shape)
    return mod.Model(inputs, L.LSTM(3, return_sequences=True)(L.Masking()(inputs)))


def test_masked_steps_do_not_count():
    x, y = _data()
    model = _model(layers, fkeras, x)
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    out = np.asarray(model.predict(x, verbose=0), np.float64)
    valid = (x != 0).any(-1)
    want_mse = ((out - y) ** 2).mean(-1)[valid].mean()
    want_mae = np.abs(out - y).mean(-1)[valid].mean()
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    np.testing.assert_allclose(logs["loss"], want_mse, rtol=1e-5)
    np.testing.assert_allclose(logs["mae"], want_mae, rtol=1e-5)
    y2 = y.copy()
    y2[~valid] = 1e3  # targets at masked steps change nothing
    logs2 = model.evaluate(x, y2, verbose=0, return_dict=True)
    np.testing.assert_allclose([logs2["loss"], logs2["mae"]], [logs["loss"], logs["mae"]],
                               rtol=1e-6)


def test_same_as_keras():
    keras = pytest.importorskip("keras")
    x, y = _data(1)
    k_model = _model(keras.layers, keras, x)
    f_model = _model(layers, fkeras, x)
    f_model.set_weights(k_model.get_weights())
    for m in (k_model, f_model):
        m.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    k_logs = k_model.evaluate(x, y, verbose=0, return_dict=True)
    f_logs = f_model.evaluate(x, y, verbose=0, return_dict=True)
    for key in ("loss", "mae"):
        np.testing.assert_allclose(f_logs[key], k_logs[key], rtol=1e-5)
