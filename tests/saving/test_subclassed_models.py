"""Subclassed models in `.keras` files (Keras 3's layout): config entry, build_config, weights
keyed by the attribute walk, compile and optimizer state; interop with real Keras 3 both
ways; the errors for classes that cannot be saved or rebuilt."""

import io
import json
import warnings
import zipfile

import numpy as np
import pytest

import fkeras
import subclassed_models

PACKAGE = "FkSubclassTests"
M = subclassed_models.define(fkeras, PACKAGE)
X = np.random.default_rng(0).standard_normal((8, 3)).astype("float32")
Y = np.random.default_rng(1).standard_normal((8, 1)).astype("float32")

# name -> (factory, output width)
CASES = {
    "nested": (lambda: M["Nested"](units=4), 1),
    "appended_auto_config": (lambda: M["Appended"](units=5, depth=3), 1),
    "model_inside_model": (lambda: M["Outer"](), 1),
    "own_build": (lambda: M["OwnBuild"](), 3),
    "no_args": (lambda: M["NoArgs"](), 2),
    "serialized_layer_arguments": (
        lambda: M["Composed"](fkeras.layers.Dense(6, activation="relu6")), 2),
}


def _config(path):
    return json.loads(zipfile.ZipFile(path).read("config.json"))


def _h5_datasets(path):
    import h5py

    out = {}
    with h5py.File(io.BytesIO(zipfile.ZipFile(path).read("model.weights.h5")), "r") as f:
        f.visititems(lambda name, obj: out.__setitem__(name, obj.shape)
                     if isinstance(obj, h5py.Dataset) else None)
    return out


def _trained(name, compile=True):
    model = CASES[name][0]()
    if compile:
        model.compile(optimizer=fkeras.optimizers.Adam(0.01), loss="mse", metrics=["mae"])
        model.fit(X, np.repeat(Y, CASES[name][1], axis=1), batch_size=4, epochs=2, verbose=0)
    else:
        model(X)
    return model


@pytest.mark.parametrize("name", sorted(CASES))
def test_round_trip_predictions_weights_and_optimizer(name, tmp_path):
    pytest.importorskip("h5py")
    model = _trained(name)
    model.save(tmp_path / "m.keras")
    restored = fkeras.saving.load_model(tmp_path / "m.keras")
    assert type(restored) is type(model)
    assert [(w.name, w.shape) for w in restored.weights] == \
        [(w.name, w.shape) for w in model.weights]
    for a, b in zip(model.weights, restored.weights):
        np.testing.assert_array_equal(np.asarray(b), np.asarray(a))
    np.testing.assert_array_equal(restored.predict(X, verbose=0), model.predict(X, verbose=0))
    assert int(np.asarray(restored.optimizer.iterations)) == 4
    assert len(restored.optimizer.variables) == len(model.optimizer.variables)
    for a, b in zip(model.optimizer.variables, restored.optimizer.variables):
        np.testing.assert_array_equal(np.asarray(b), np.asarray(a))
    # training goes on from the same state: one more step matches step for step
    target = np.repeat(Y, CASES[name][1], axis=1)
    model.train_on_batch(X, target)
    restored.train_on_batch(X, target)
    np.testing.assert_allclose(restored.predict(X, verbose=0), model.predict(X, verbose=0),
                               rtol=1e-6, atol=1e-6)


# name -> expected config.json "config" (auto configs hold the arguments actually passed)
CONFIGS = {
    "nested": {"name": "nested", "trainable": True, "dtype": "float32", "units": 4},
    "appended_auto_config": {"name": "appended", "units": 5, "depth": 3, "trainable": True,
                             "dtype": "float32"},
    "no_args": {},
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_model_entry_as_keras_writes_it(name, tmp_path):
    pytest.importorskip("h5py")
    model = _trained(name, compile=False)
    model.save(tmp_path / "m.keras")
    entry = _config(tmp_path / "m.keras")
    cls = type(model)
    assert entry["class_name"] == cls.__name__
    assert entry["registered_name"] == f"{PACKAGE}>{cls.__name__}"
    assert entry["module"] == cls.__module__
    assert entry["config"] == CONFIGS[name]
    assert entry["build_config"] == {"input_shape": [8, 3]}
    assert "compile_config" not in entry


def test_weights_are_keyed_by_the_attribute_walk(tmp_path):
    """Measured on Keras 3.15 (torch): attributes sorted by name, the Model's `layers` list
    among them (so `out`, `stack`, `sub` go under layers/), list and dict items named by
    class, the optimizer under optimizer/vars."""
    pytest.importorskip("h5py")
    model = _trained("nested")
    model.save(tmp_path / "m.keras")
    keys = {k for k in _h5_datasets(tmp_path / "m.keras") if not k.startswith("optimizer")}
    assert keys == {
        "block/d1/vars/0", "block/d1/vars/1", "block/d2/vars/0", "block/d2/vars/1",
        "bn/vars/0", "bn/vars/1", "bn/vars/2", "bn/vars/3",
        "heads/dense/vars/0", "heads/dense/vars/1",
        "layers/dense/vars/0", "layers/dense/vars/1",          # stack[0]
        "layers/dense_1/vars/0", "layers/dense_1/vars/1",      # stack[1]
        "layers/sequential/layers/dense/vars/0", "layers/sequential/layers/dense/vars/1",
        "layers/dense_3/vars/0", "layers/dense_3/vars/1",      # out (heads' Dense is 2)
    }


def test_unbuilt_model_is_refused_on_save(tmp_path):
    pytest.importorskip("h5py")
    with pytest.raises(ValueError, match="has not yet been built"):
        M["Nested"]().save(tmp_path / "m.keras")


# ---- errors (Keras 3's messages) ----
class Unregistered(fkeras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = fkeras.layers.Dense(2)

    def call(self, x):
        return self.dense(x)


class StarArgs(fkeras.Model):
    def __init__(self, *sizes, **kwargs):
        super().__init__(**kwargs)
        self.dense = fkeras.layers.Dense(sizes[0])

    def call(self, x):
        return self.dense(x)


SAVE_ERRORS = {
    "object_argument": (lambda: M["ObjectArg"](fkeras.layers.Dense(2)),
                        "non-serializable argument values"),
    "star_args": (lambda: StarArgs(2), "variadic positional"),
}


@pytest.mark.parametrize("name", sorted(SAVE_ERRORS))
def test_models_that_cannot_describe_themselves_are_refused_on_save(name, tmp_path):
    factory, message = SAVE_ERRORS[name]
    model = factory()
    model(X)
    with pytest.raises(NotImplementedError, match=message):
        model.save(tmp_path / "m.keras")
    assert not (tmp_path / "m.keras").exists()


def test_unregistered_class_needs_custom_objects(tmp_path):
    pytest.importorskip("h5py")
    model = Unregistered()
    model(X)
    model.save(tmp_path / "m.keras")
    assert _config(tmp_path / "m.keras")["registered_name"] == "Unregistered"
    with pytest.raises(ValueError, match="Could not locate class 'Unregistered'"):
        fkeras.saving.load_model(tmp_path / "m.keras")
    restored = fkeras.saving.load_model(tmp_path / "m.keras",
                                        custom_objects={"Unregistered": Unregistered})
    np.testing.assert_array_equal(restored.predict(X, verbose=0), model.predict(X, verbose=0))


def test_config_missing_a_constructor_argument_cannot_be_revived(tmp_path):
    pytest.importorskip("h5py")
    model = M["ShortConfig"](2)
    model(X)
    model.save(tmp_path / "m.keras")
    with pytest.raises(TypeError, match=r"could not be deserialized properly(.|\n)*Unable to "
                                        r"revive model from config(.|\n)*'units'"):
        fkeras.saving.load_model(tmp_path / "m.keras")


def _edit_entry(tmp_path, edit):
    """m.keras of a built NoArgs model, with its config.json entry edited."""
    model = M["NoArgs"]()
    model(X)
    model.save(tmp_path / "m.keras")
    entry = _config(tmp_path / "m.keras")
    edit(entry)
    with zipfile.ZipFile(tmp_path / "m.keras") as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    members["config.json"] = json.dumps(entry).encode()
    with zipfile.ZipFile(tmp_path / "e.keras", "w") as zf:
        for n, data in members.items():
            zf.writestr(n, data)
    return tmp_path / "e.keras"


def test_keras_base_config_for_a_constructor_without_kwargs_is_refused(tmp_path):
    """Keras 3 writes `trainable`/`dtype` for NoArgs(); its own loader then fails with this
    TypeError, and so does fkeras's (fkeras writes only what the constructor takes)."""
    pytest.importorskip("h5py")
    path = _edit_entry(tmp_path, lambda e: e["config"].update(
        trainable=True, dtype={"module": "keras", "class_name": "DTypePolicy",
                               "config": {"name": "float32"}, "registered_name": None}))
    with pytest.raises(TypeError, match="unexpected keyword argument 'trainable'"):
        fkeras.saving.load_model(path)


@pytest.mark.parametrize("shape", [[8, -1], [8, 2**40], [8, "3"], [8, True], "8x3",
                                   [[8, 3]] * 2000])
def test_hostile_build_config_is_refused_before_building(shape, tmp_path):
    pytest.importorskip("h5py")
    path = _edit_entry(tmp_path, lambda e: e.update(build_config={"input_shape": shape}))
    with pytest.raises(ValueError, match="Invalid build config"):
        fkeras.saving.load_model(path)


@fkeras.saving.register_keras_serializable(package=PACKAGE)
class ValueBranch(fkeras.Model):
    """A `call` that needs values (cannot run on symbolic inputs)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.small = fkeras.layers.Dense(2)
        self.large = fkeras.layers.Dense(2)

    def call(self, x):
        return self.large(x) if float(np.abs(np.asarray(x)).max()) > 1e6 else self.small(x)


def test_model_whose_call_needs_values_is_built_by_one_call_on_zeros(tmp_path):
    pytest.importorskip("h5py")
    model = ValueBranch()
    model(X)
    model.save(tmp_path / "m.keras")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        restored = fkeras.saving.load_model(tmp_path / "m.keras")
    assert restored.small.built and not restored.large.built
    np.testing.assert_array_equal(restored(X), model(X))


def test_model_that_cannot_be_built_from_its_build_config_warns(tmp_path):
    pytest.importorskip("h5py")
    path = _edit_entry(tmp_path, lambda e: e.update(build_config={"input_shape": []}))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ValueError):
            fkeras.saving.load_model(path)
    assert any("cannot be built automatically" in str(w.message) for w in caught)
