"""keras.saving.serialize_keras_object / deserialize_keras_object and keras.layers.serialize /
deserialize: round trips for built-ins, registered classes and functions, nested layers in a
custom get_config; names resolve through the allow-list only."""

import numpy as np
import pytest

import fkeras
from fkeras import layers, saving


@pytest.mark.parametrize("obj", [
    fkeras.regularizers.L1(0.005), fkeras.regularizers.L1L2(l1=1e-5, l2=1e-4),
    fkeras.initializers.Constant(0.5), fkeras.constraints.NonNeg(),
    fkeras.losses.MeanSquaredError(), fkeras.optimizers.SGD(0.1),
])
def test_builtin_objects_round_trip(obj):
    config = saving.serialize_keras_object(obj)
    assert config["class_name"] == type(obj).__name__ and config["registered_name"] is None
    again = saving.deserialize_keras_object(config)
    assert type(again) is type(obj)
    assert saving.serialize_keras_object(again) == config



_SNAPSHOT = {}


@pytest.fixture(autouse=True)
def _registry_snapshot():
    """These tests register objects; they restore the registry as they found it (other test
    modules register their own at import)."""
    _SNAPSHOT.clear()
    _SNAPSHOT.update(saving.get_custom_objects())
    yield
    _restore_registry()


def _restore_registry():
    registry = saving.get_custom_objects()
    registry.clear()
    registry.update(_SNAPSHOT)

def test_functions_round_trip_by_public_name():
    config = saving.serialize_keras_object(fkeras.activations.relu)
    assert config == {"module": "keras.activations", "class_name": "function",
                      "config": "relu", "registered_name": None}
    assert saving.deserialize_keras_object(config) is fkeras.activations.relu


def test_unknown_or_foreign_names_are_refused():
    with pytest.raises(ValueError, match="Could not locate"):
        saving.deserialize_keras_object({"module": "os", "class_name": "function",
                                         "config": "system", "registered_name": None})
    with pytest.raises(ValueError, match="Could not locate"):
        saving.deserialize_keras_object({"module": "subprocess", "class_name": "Popen",
                                         "config": {}, "registered_name": None})


def test_layers_serialize_registered_and_nested():
    @saving.register_keras_serializable(package="TestPkg", name="Scaled")
    class ScaledDense(layers.Layer):
        def __init__(self, units, inner=None, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.inner = inner if inner is not None else layers.Dense(units)

        def get_config(self):
            return {**super().get_config(), "units": self.units, "inner": self.inner}

        @classmethod
        def from_config(cls, config):
            config["inner"] = layers.deserialize(config["inner"])
            return cls(**config)

        def call(self, x):
            return self.inner(x) * 2.0

    try:
        layer = ScaledDense(3, name="scaled")
        config = layers.serialize(layer)
        assert config["registered_name"] == "TestPkg>Scaled"
        assert config["config"]["inner"]["class_name"] == "Dense"  # serialized, not an object
        again = layers.deserialize(config)
        assert isinstance(again, ScaledDense) and isinstance(again.inner, layers.Dense)
        inp = fkeras.Input((4,))
        model = fkeras.Model(inp, layer(inp))
        clone = fkeras.Model.from_config(model.get_config())
        assert clone.layers[-1].inner.units == 3
    finally:
        _restore_registry()


def test_registered_activation_loads_by_its_bare_name(tmp_path):
    pytest.importorskip("h5py")

    @saving.register_keras_serializable(package="my_package", name="custom_fn")
    def custom_fn(x):
        return x ** 2

    try:
        inp = fkeras.Input((4,))
        model = fkeras.Model(inp, layers.Dense(1, activation=custom_fn)(inp))
        model.save(tmp_path / "m.keras")
        loaded = fkeras.models.load_model(tmp_path / "m.keras")
        x = np.random.default_rng(0).random((3, 4)).astype("float32")
        np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    finally:
        _restore_registry()


def test_keras3_lowercase_aliases_and_module_helpers():
    assert fkeras.initializers.he_normal is fkeras.initializers.HeNormal
    assert fkeras.initializers.zeros is fkeras.initializers.Zeros
    assert fkeras.initializers.OrthogonalInitializer is fkeras.initializers.Orthogonal
    assert fkeras.constraints.max_norm is fkeras.constraints.MaxNorm
    reg = fkeras.regularizers.deserialize(saving.serialize_keras_object(fkeras.regularizers.L2(0.1)))
    assert isinstance(reg, fkeras.regularizers.L2) and reg.get_config()["l2"] == pytest.approx(0.1)
    con = fkeras.constraints.deserialize("non_neg")
    assert isinstance(con, fkeras.constraints.NonNeg)
    assert fkeras.utils.serialize_keras_object is saving.serialize_keras_object
    assert fkeras.utils.is_keras_tensor(fkeras.Input((2,)))
    assert fkeras.utils.standardize_dtype("float") == "float32"
    x, y, sw = fkeras.utils.unpack_x_y_sample_weight(fkeras.utils.pack_x_y_sample_weight(1, 2))
    assert (x, y, sw) == (1, 2, None)


def test_built_layer_entry_as_keras_writes_it_and_rebuilds():
    """Keras 3: a built-in layer under "keras.layers", with the shape it was built with;
    deserializing builds it from that shape."""
    dense = layers.Dense(3)
    dense(np.ones((2, 5), "float32"))
    entry = saving.serialize_keras_object(dense)
    assert entry["module"] == "keras.layers"
    assert entry["build_config"] == {"input_shape": [2, 5]}
    again = saving.deserialize_keras_object(entry)
    assert again.built and [tuple(w.shape) for w in again.weights] == [(5, 3), (3,)]
    assert "build_config" not in saving.serialize_keras_object(layers.Dense(3))


def test_layer_entry_with_hostile_build_config_is_refused():
    entry = saving.serialize_keras_object(layers.Dense(3))
    entry["build_config"] = {"input_shape": [2, 2**40]}
    with pytest.raises(ValueError, match="Invalid build config"):
        saving.deserialize_keras_object(entry)
