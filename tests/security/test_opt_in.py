"""What safe mode lets through when asked: bytecode lambdas with safe_mode=False or after
enable_unsafe_deserialization(), custom layers and functions through custom_objects,
custom_object_scope and register_keras_serializable."""

import numpy as np
import pytest

import fkeras
from fkeras import layers, ops
from fkeras.saving import safe_resolve

pytest.importorskip("h5py")

X = np.arange(8, dtype=np.float32).reshape(2, 4)


@pytest.fixture
def global_safe_mode(monkeypatch):
    """Restores the global setting after a test that turns safe mode off."""
    monkeypatch.setitem(fkeras.config._settings, "safe_mode", True)


def lambda_model(path):
    inp = fkeras.Input((4,))
    model = fkeras.Model(inp, layers.Lambda(lambda t: ops.multiply(t, 3.0))(inp))
    model.save(path)
    return model


def test_bytecode_lambda_loads_only_when_asked(tmp_path, global_safe_mode):
    lambda_model(tmp_path / "m.keras")
    with pytest.raises(ValueError, match="is a Python lambda"):
        fkeras.models.load_model(tmp_path / "m.keras")
    with pytest.raises(ValueError, match="is a Python lambda"):
        fkeras.models.load_model(tmp_path / "m.keras", safe_mode=True)
    model = fkeras.models.load_model(tmp_path / "m.keras", safe_mode=False)
    np.testing.assert_allclose(model.predict(X, verbose=0), 3 * X)
    assert fkeras.config.in_safe_mode()  # safe_mode=False did not leak out of the load


def test_enable_unsafe_deserialization(tmp_path, global_safe_mode):
    lambda_model(tmp_path / "m.keras")
    fkeras.config.enable_unsafe_deserialization()
    assert not fkeras.config.in_safe_mode()
    model = fkeras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(model.predict(X, verbose=0), 3 * X)
    # An explicit safe_mode=True still refuses (Keras 3 lets the global switch win).
    with pytest.raises(ValueError, match="is a Python lambda"):
        fkeras.models.load_model(tmp_path / "m.keras", safe_mode=True)


def test_lambda_from_config_is_guarded_itself(global_safe_mode):
    config = layers.Lambda(lambda t: ops.add(t, 1.0)).get_config()
    with pytest.raises(ValueError, match="is a Python lambda"):
        layers.Lambda.from_config(config)
    with safe_resolve.SafeModeScope(False):
        assert layers.Lambda.from_config(config)(X)[0, 0] == 1.0
        with pytest.raises(ValueError, match="is a Python lambda"):
            layers.Lambda.from_config(config, safe_mode=True)
    fkeras.config.enable_unsafe_deserialization()
    np.testing.assert_allclose(layers.Lambda.from_config(config)(X), X + 1)


class Scale(layers.Layer):
    def __init__(self, factor=2.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def call(self, x):
        return ops.multiply(x, self.factor)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


def triple(x):
    return ops.multiply(x, 3.0)


def custom_model(path):
    inp = fkeras.Input((4,))
    y = layers.Lambda(triple)(Scale(5.0)(inp))
    model = fkeras.Model(inp, layers.Dense(2, activation=ops.relu)(y))
    model.save(path)
    return model


def test_custom_objects_and_scope_load_custom_layers_and_functions(tmp_path):
    model = custom_model(tmp_path / "m.keras")
    with pytest.raises(ValueError, match="Unknown layer: 'Scale'"):
        fkeras.models.load_model(tmp_path / "m.keras")
    loaded = fkeras.models.load_model(tmp_path / "m.keras",
                                      custom_objects={"Scale": Scale, "triple": triple})
    np.testing.assert_allclose(loaded.predict(X, verbose=0), model.predict(X, verbose=0))
    with fkeras.saving.custom_object_scope({"Scale": Scale, "triple": triple}):
        again = fkeras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(again.predict(X, verbose=0), model.predict(X, verbose=0))
    assert again.layers[1].factor == 5.0 and again.layers[2].function is triple


def test_register_keras_serializable(tmp_path, monkeypatch):
    monkeypatch.setattr(fkeras.saving.object_registration, "_GLOBAL_CUSTOM_OBJECTS", {})
    monkeypatch.setattr(fkeras.saving.object_registration, "_GLOBAL_CUSTOM_NAMES", {})

    @fkeras.saving.register_keras_serializable(package="MyPkg", name="halve")
    def halve(x):
        return ops.multiply(x, 0.5)

    @fkeras.saving.register_keras_serializable()
    class Shift(layers.Layer):
        def call(self, x):
            return ops.add(x, 1.0)

    assert fkeras.saving.get_registered_name(halve) == "MyPkg>halve"
    assert fkeras.saving.get_registered_name(Shift) == "Custom>Shift"
    assert fkeras.saving.get_registered_object("MyPkg>halve") is halve
    assert fkeras.utils.get_registered_object("Custom>Shift") is Shift
    assert fkeras.saving.get_registered_name(triple) == "triple"
    assert fkeras.saving.get_registered_object("nothing") is None
    inp = fkeras.Input((4,))
    model = fkeras.Model(inp, layers.Lambda(halve)(Shift()(inp)))
    model.save(tmp_path / "m.keras")
    loaded = fkeras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(loaded.predict(X, verbose=0), (X + 1) / 2)
    with pytest.raises(ValueError, match="does not have a get_config"):
        fkeras.saving.register_keras_serializable()(type("NoConfig", (), {}))


def test_registry_wins_over_scope_wins_over_argument(monkeypatch):
    registry = fkeras.saving.object_registration
    monkeypatch.setattr(registry, "_GLOBAL_CUSTOM_OBJECTS", {})
    a, b, c = (lambda x: x), (lambda x: x), (lambda x: x)
    assert registry.get_registered_object("k", {"k": a}) is a
    with fkeras.saving.custom_object_scope({"k": b}):
        assert registry.get_registered_object("k", {"k": a}) is b
        registry.get_custom_objects()["k"] = c
        assert registry.get_registered_object("k", {"k": a}) is c
    with pytest.raises(TypeError, match="must be a dict"):
        fkeras.saving.CustomObjectScope(["k"])
