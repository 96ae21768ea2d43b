"""The customizing-saving guide's hooks on user classes: `save_own_variables` /
`load_own_variables` overrides (extra store keys), and `get_compile_config` /
`compile_from_config` overrides on a model whose `compile` takes other arguments; `.keras`
files exchanged with Keras 3 both ways."""

import warnings

import numpy as np
import pytest
from patterns_parity import keras_or_none, to_np

import fkeras


def scaled_layer_class(lib, package):
    @lib.saving.register_keras_serializable(package=package)
    class Scaled(lib.layers.Layer):
        """A weight from add_weight plus a state array kept outside the variables."""

        def __init__(self, units=3, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.scale = np.linspace(0.5, 1.5, units).astype("float32")

        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], self.units),
                                     initializer="glorot_uniform")

        def call(self, x):
            return lib.ops.matmul(x, self.w) * lib.ops.convert_to_tensor(self.scale)

        def save_own_variables(self, store):
            super().save_own_variables(store)
            store["scale"] = self.scale

        def load_own_variables(self, store):
            self.scale = np.asarray(store["scale"], "float32")
            self.w.assign(store["0"])

        def get_config(self):
            return dict(super().get_config(), units=self.units)

    return Scaled


def _model(lib, layer_cls):
    model = lib.Sequential([lib.Input((4,)), layer_cls(3)])
    model.layers[0].scale = np.array([2.0, -1.0, 0.25], "float32")
    return model


X = np.random.RandomState(0).standard_normal((5, 4)).astype("float32")


def test_save_own_variables_override_round_trips(tmp_path):
    cls = scaled_layer_class(fkeras, "guides2_fk")
    model = _model(fkeras, cls)
    expected = to_np(model(X))
    model.save(tmp_path / "m.keras")
    restored = fkeras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_array_equal(restored.layers[0].scale, [2.0, -1.0, 0.25])
    np.testing.assert_allclose(to_np(restored(X)), expected, rtol=1e-6)
    model.save_weights(tmp_path / "m.weights.h5")
    fresh = _model(fkeras, cls)
    fresh.layers[0].scale = np.zeros(3, "float32")
    fresh.load_weights(tmp_path / "m.weights.h5")
    np.testing.assert_allclose(to_np(fresh(X)), expected, rtol=1e-6)


@pytest.mark.parametrize("direction", ["fkeras_to_keras", "keras_to_fkeras"])
def test_save_own_variables_override_files_load_in_keras(tmp_path, direction):
    keras = keras_or_none()
    if keras is None:
        pytest.skip("keras (torch backend) is not installed")
    src, dst = (fkeras, keras) if direction == "fkeras_to_keras" else (keras, fkeras)
    package = f"guides2_{direction}"
    src_cls, dst_cls = scaled_layer_class(src, package), scaled_layer_class(dst, package)
    model = _model(src, src_cls)
    expected = to_np(model(X))
    model.save(tmp_path / "m.keras")
    restored = dst.models.load_model(tmp_path / "m.keras",
                                     custom_objects={f"{package}>Scaled": dst_cls})
    np.testing.assert_array_equal(restored.layers[0].scale, [2.0, -1.0, 0.25])
    np.testing.assert_allclose(to_np(restored(X)), expected, rtol=1e-5)


def test_default_hooks_store_own_variables_in_order():
    layer = fkeras.layers.BatchNormalization()
    layer.build((None, 3))
    store = {}
    layer.save_own_variables(store)
    assert list(store) == ["0", "1", "2", "3"]
    np.testing.assert_array_equal(store["3"], np.ones(3))  # moving_variance last
    other = fkeras.layers.BatchNormalization()
    other.build((None, 3))
    store["0"] = np.full(3, 4.0, "float32")
    other.load_own_variables(store)
    np.testing.assert_array_equal(other.gamma.numpy(), [4.0, 4.0, 4.0])
    with pytest.raises(ValueError, match="expected 4 variables, but received 1"):
        other.load_own_variables({"0": store["0"]})


def custom_compile_classes(lib, package):
    @lib.saving.register_keras_serializable(package=package)
    def halved_mse(y_true, y_pred):
        return lib.ops.mean(lib.ops.square(y_pred - y_true), axis=-1) / 2.0

    @lib.saving.register_keras_serializable(package=package)
    class CustomCompile(lib.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.dense = lib.layers.Dense(2)

        def call(self, x):
            return self.dense(x)

        def compile(self, optimizer, loss_fn):
            super().compile(optimizer=optimizer, loss=loss_fn)
            self.model_optimizer, self.loss_fn = optimizer, loss_fn

        def get_compile_config(self):
            return {"model_optimizer": self.model_optimizer, "loss_fn": self.loss_fn}

        def compile_from_config(self, config):
            self.compile(
                optimizer=lib.utils.deserialize_keras_object(config["model_optimizer"]),
                loss_fn=lib.utils.deserialize_keras_object(config["loss_fn"]))

        def get_config(self):
            return {"name": self.name}

    @lib.saving.register_keras_serializable(package=package)
    class PlainCompileOverride(CustomCompile):
        """compile overridden, compile_from_config not: loaded uncompiled, with a warning."""

        get_compile_config = lib.Model.get_compile_config
        compile_from_config = lib.Model.compile_from_config

    return halved_mse, CustomCompile, PlainCompileOverride


def test_compile_from_config_override_is_called_on_load(tmp_path):
    loss, cls, _ = custom_compile_classes(fkeras, "guides2_compile")
    model = cls()
    model.compile(optimizer="sgd", loss_fn=loss)
    y = np.zeros((5, 2), "float32")
    model.fit(X, y, epochs=1, verbose=0)
    model.save(tmp_path / "c.keras")
    restored = fkeras.models.load_model(tmp_path / "c.keras")
    assert restored.compiled and restored.loss_fn is loss
    assert restored.model_optimizer == "sgd"
    np.testing.assert_allclose(restored.evaluate(X, y, verbose=0),
                               model.evaluate(X, y, verbose=0), rtol=1e-6)


def test_overridden_compile_without_compile_from_config_warns(tmp_path):
    _, _, cls = custom_compile_classes(fkeras, "guides2_compile_warn")
    model = cls()
    model.compile(optimizer="sgd", loss_fn="mse")
    model(X)
    model.save(tmp_path / "w.keras")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        restored = fkeras.models.load_model(tmp_path / "w.keras")
    assert not restored.compiled
    assert any("compile_from_config" in str(w.message) for w in caught)


def test_get_compile_config_of_a_plain_model():
    model = fkeras.Sequential([fkeras.Input((4,)), fkeras.layers.Dense(2)])
    assert model.get_compile_config() == {}
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    config = model.get_compile_config()
    assert config["loss"] == "mse" and config["metrics"] == ["mae"]
    assert config["optimizer"]["class_name"] == "Adam"
    clone = fkeras.Sequential([fkeras.Input((4,)), fkeras.layers.Dense(2)])
    clone.compile_from_config(config)
    assert clone.compiled and type(clone.optimizer).__name__ == "Adam"


def custom_build_class(lib, package):
    @lib.saving.register_keras_serializable(package=package)
    class CustomBuild(lib.layers.Layer):
        """`build` takes an extra argument; get_build_config / build_from_config carry it."""

        def __init__(self, units=4, **kwargs):
            super().__init__(**kwargs)
            self.units = units

        def build(self, input_shape, layer_init):
            self.w = self.add_weight(shape=(input_shape[-1], self.units),
                                     initializer=layer_init)
            self.layer_init = layer_init

        def call(self, x):
            return lib.ops.matmul(x, self.w)

        def get_config(self):
            return dict(super().get_config(), units=self.units)

        def get_build_config(self):
            return {"input_shape": [None, int(self.w.shape[0])],
                    "layer_init": self.layer_init}

        def build_from_config(self, config):
            self.build(config["input_shape"], config["layer_init"])

    return CustomBuild


@pytest.mark.parametrize("kind", ["sequential", "functional"])
def test_build_from_config_override_is_used_when_loading(tmp_path, kind):
    """Keras 3 builds each deserialized layer from its entry's build_config (Sequential and
    Functional models included), through a user's `build_from_config` override."""
    def make(lib, package):
        layer = custom_build_class(lib, package)(3)
        layer.build((None, 4), layer_init="ones")
        if kind == "sequential":
            model = lib.Sequential([lib.Input((4,)), layer])
        else:
            inputs = lib.Input((4,))
            model = lib.Model(inputs, layer(inputs))
        return model

    package = f"guides2_build_{kind}"
    model = make(fkeras, package)
    model.layers[-1].w.assign(np.arange(12, dtype="float32").reshape(4, 3))
    model.save(tmp_path / "b.keras")
    restored = fkeras.models.load_model(tmp_path / "b.keras")
    assert restored.layers[-1].layer_init == "ones"
    np.testing.assert_allclose(to_np(restored(X)), to_np(model(X)), rtol=1e-6)
    keras = keras_or_none()
    if keras is not None:  # Keras reads the file through the same override
        k_cls = custom_build_class(keras, package)
        k_model = keras.models.load_model(tmp_path / "b.keras",
                                          custom_objects={f"{package}>CustomBuild": k_cls})
        assert k_model.layers[-1].layer_init == "ones"
        np.testing.assert_allclose(to_np(k_model(X)), to_np(model(X)), rtol=1e-5)
