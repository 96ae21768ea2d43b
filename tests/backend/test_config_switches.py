"""keras.config's switches: epoch/step caps in fit/evaluate/predict, interactive logging,
traceback filtering, flash attention, backend and dtype policies."""

import logging

import numpy as np
import pytest

import fkeras
from fkeras import config


@pytest.fixture(autouse=True)
def restore_settings():
    saved = dict(config._settings)
    yield
    config._settings.clear()
    config._settings.update(saved)


def _model():
    model = fkeras.Sequential([fkeras.Input((3,)), fkeras.layers.Dense(1)])
    model.compile("sgd", "mse")
    return model


class Count(fkeras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs, self.train, self.test, self.predict = 0, 0, 0, 0

    def on_epoch_end(self, epoch, logs=None):
        self.epochs += 1

    def on_train_batch_end(self, batch, logs=None):
        self.train += 1

    def on_test_batch_end(self, batch, logs=None):
        self.test += 1

    def on_predict_batch_end(self, batch, logs=None):
        self.predict += 1


def test_max_epochs_and_steps_cap_every_loop():
    x, y = np.ones((80, 3), "float32"), np.ones((80, 1), "float32")
    config.set_max_epochs(2)
    config.set_max_steps_per_epoch(3)
    assert (config.max_epochs(), config.max_steps_per_epoch()) == (2, 3)
    model, c = _model(), Count()
    with pytest.warns(UserWarning, match="Limiting epochs to 2"):
        model.fit(x, y, batch_size=8, epochs=5, verbose=0, callbacks=[c])
    assert (c.epochs, c.train) == (2, 6)
    model.evaluate(x, y, batch_size=8, verbose=0, callbacks=[c])
    assert c.test == 3
    out = model.predict(x, batch_size=8, verbose=0, callbacks=[c])
    assert c.predict == 3 and out.shape == (24, 1)


def test_caps_read_the_environment(monkeypatch):
    monkeypatch.setenv("KERAS_MAX_EPOCHS", "4")
    monkeypatch.setenv("KERAS_MAX_STEPS_PER_EPOCH", "7")
    assert (config.max_epochs(), config.max_steps_per_epoch()) == (4, 7)
    config.set_max_epochs(None)
    assert config.max_epochs() is None


def test_a_cap_above_the_data_changes_nothing():
    config.set_max_steps_per_epoch(100)
    model, c = _model(), Count()
    model.fit(np.ones((16, 3), "float32"), np.ones((16, 1), "float32"), batch_size=8,
              epochs=1, verbose=0, callbacks=[c])
    assert c.train == 2


def test_interactive_logging_off_sends_bars_to_the_logger(capsys, caplog):
    config.disable_interactive_logging()
    assert not config.is_interactive_logging_enabled()
    with caplog.at_level(logging.INFO, logger="fkeras"):
        _model().fit(np.ones((16, 3), "float32"), np.ones((16, 1), "float32"), batch_size=8,
                     epochs=1, verbose=1)
    assert capsys.readouterr().out == ""
    assert any("2/2" in r.getMessage() and "loss" in r.getMessage() for r in caplog.records)
    config.enable_interactive_logging()
    assert config.is_interactive_logging_enabled()


def test_flags():
    assert config.is_traceback_filtering_enabled()
    config.disable_traceback_filtering()
    assert not config.is_traceback_filtering_enabled()
    assert config.is_flash_attention_enabled() is None
    config.enable_flash_attention()
    assert config.is_flash_attention_enabled() is True
    config.disable_flash_attention()
    assert config.is_flash_attention_enabled() is False
    assert config.is_nnx_enabled() is False


def test_set_backend():
    config.set_backend("fkeras")
    with pytest.warns(UserWarning, match="own backend"):
        config.set_backend("jax")
    with pytest.raises(ValueError, match="Unknown backend"):
        config.set_backend("theano")


def test_dtype_policies():
    assert config.dtype_policy().name == "float32"
    config.set_dtype_policy("float32")
    config.set_dtype_policy(fkeras.DTypePolicy("float32"))
    policy = fkeras.DTypePolicy("mixed_bfloat16")
    assert (policy.compute_dtype, policy.variable_dtype) == ("bfloat16", "float32")
    for refused in ("mixed_float16", "float16", "bfloat16", "float64"):
        with pytest.raises(ValueError, match="no float16 or float64 kernels"):
            config.set_dtype_policy(refused)
    config.set_dtype_policy("mixed_bfloat16")
    try:
        assert config.dtype_policy().name == "mixed_bfloat16"
        assert fkeras.layers.Dense(2).compute_dtype == "bfloat16"
    finally:
        config.set_dtype_policy("float32")
    assert fkeras.layers.Dense(2).compute_dtype == "float32"
    with pytest.raises(ValueError, match="Cannot convert 'foo'"):
        fkeras.DTypePolicy("foo")
    assert config.dtype_policy().name == "float32"
    restored = fkeras.dtype_policies.deserialize(
        fkeras.dtype_policies.serialize(fkeras.DTypePolicy("float32")))
    assert restored == fkeras.DTypePolicy("float32")


def test_dtype_policy_matches_keras():
    keras = pytest.importorskip("keras")
    for name in ("float32", "mixed_bfloat16", "mixed_float16", "float16"):
        k, f = keras.DTypePolicy(name), fkeras.DTypePolicy(name)
        assert (f.name, f.compute_dtype, f.variable_dtype) == \
            (k.name, k.compute_dtype, k.variable_dtype)
        assert f.get_config() == k.get_config()
        assert fkeras.dtype_policies.serialize(f) == keras.dtype_policies.serialize(k)
