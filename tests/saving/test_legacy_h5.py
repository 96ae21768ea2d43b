"""Whole-model legacy HDF5 files: fkeras round trips (weights, compile config, optimizer state)
and interoperability with real Keras 3 in both directions."""

import json

import numpy as np
import pytest

import fkeras
from fkeras import layers

h5py = pytest.importorskip("h5py")

RNG = np.random.default_rng(0)
X = RNG.random((8, 5, 5, 1)).astype(np.float32)
Y = RNG.integers(0, 3, 8)


def _conv_model(lib):
    L = lib.layers
    inp = lib.Input((5, 5, 1))
    h = L.Conv2D(2, 3, activation="relu")(inp)
    h = L.BatchNormalization()(L.Flatten()(h))
    return lib.Model(inp, L.Dense(3, activation="softmax")(h))


def _dense_sequential(lib):
    L = lib.layers
    return lib.Sequential([lib.Input((5, 5, 1)), L.Flatten(), L.Dense(4, activation="tanh"),
                           L.Dense(3, activation="softmax")])


BUILDERS = {"conv_functional": _conv_model, "dense_sequential": _dense_sequential}


def _trained(builder, lib):
    model = builder(lib)
    model.compile(optimizer=lib.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    model.fit(X, Y, epochs=2, batch_size=4, verbose=0)
    return model


def _out(model):
    return np.asarray(model(X))


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_round_trip_restores_weights_compile_state_and_optimizer(tmp_path, name):
    model = _trained(BUILDERS[name], fkeras)
    path = tmp_path / "m.h5"
    model.save(path)
    with h5py.File(path, "r") as f:
        assert {"backend", "keras_version", "model_config", "training_config"} <= set(f.attrs)
        assert set(f) == {"model_weights", "optimizer_weights"}
        training = json.loads(f.attrs["training_config"])
        assert training["loss"] == "sparse_categorical_crossentropy"
        assert training["metrics"] == ["accuracy"]
        assert training["optimizer_config"]["class_name"] == "Adam"
    loaded = fkeras.models.load_model(path)
    assert type(loaded) is type(model) and loaded.compiled
    np.testing.assert_allclose(_out(loaded), _out(model), rtol=1e-6)
    for a, b in zip(model.optimizer.variables, loaded.optimizer.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    # training continues identically from the restored state
    model.fit(X, Y, epochs=1, batch_size=4, verbose=0, shuffle=False)
    loaded.fit(X, Y, epochs=1, batch_size=4, verbose=0, shuffle=False)
    np.testing.assert_allclose(_out(loaded), _out(model), rtol=1e-5, atol=1e-6)
    bare = fkeras.models.load_model(path, compile=False)
    assert not bare.compiled


def test_uncompiled_and_include_optimizer_false(tmp_path):
    model = _conv_model(fkeras)
    model.save(tmp_path / "plain.hdf5")
    with h5py.File(tmp_path / "plain.hdf5", "r") as f:
        assert "training_config" not in f.attrs and "optimizer_weights" not in f
    np.testing.assert_allclose(_out(fkeras.models.load_model(tmp_path / "plain.hdf5")),
                               _out(model), rtol=1e-6)
    trained = _trained(_conv_model, fkeras)
    fkeras.models.save_model(trained, tmp_path / "noopt.h5", include_optimizer=False)
    assert not fkeras.models.load_model(tmp_path / "noopt.h5").compiled
    with pytest.raises(ValueError, match="overwrite=False"):
        trained.save(tmp_path / "noopt.h5", overwrite=False)


def test_weights_only_file_is_refused_with_a_clear_message(tmp_path):
    path = tmp_path / "weights_only.h5"
    with h5py.File(path, "w") as f:
        f.create_group("model_weights")
    with pytest.raises(ValueError, match="weights only"):
        fkeras.models.load_model(path)


def test_shape_mismatch_is_reported_before_any_assignment(tmp_path):
    model = _conv_model(fkeras)
    path = tmp_path / "m.h5"
    model.save(path)
    with h5py.File(path, "a") as f:
        config = json.loads(f.attrs["model_config"])
        for entry in config["config"]["layers"]:
            if entry["class_name"] == "Dense":
                entry["config"]["units"] = 4
        f.attrs["model_config"] = json.dumps(config)
    with pytest.raises(ValueError, match="Shape mismatch"):
        fkeras.models.load_model(path)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_fkeras_file_loads_in_keras(tmp_path, name):
    keras = pytest.importorskip("keras")
    model = _trained(BUILDERS[name], fkeras)
    model.save(tmp_path / "fk.h5")
    theirs = keras.models.load_model(tmp_path / "fk.h5", compile=False)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(theirs(X)), _out(model), rtol=1e-5,
                               atol=1e-6)
    compiled = keras.models.load_model(tmp_path / "fk.h5")
    assert compiled.compiled
    assert int(keras.ops.convert_to_numpy(compiled.optimizer.iterations)) == \
        int(model.optimizer.variables[0].numpy())


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_keras_file_loads_in_fkeras(tmp_path, name):
    keras = pytest.importorskip("keras")
    theirs = _trained(BUILDERS[name], keras)
    theirs.save(tmp_path / "k3.h5")
    ours = fkeras.models.load_model(tmp_path / "k3.h5")
    assert ours.compiled
    np.testing.assert_allclose(_out(ours), keras.ops.convert_to_numpy(theirs(X)), rtol=1e-5,
                               atol=1e-6)
    for a, b in zip(theirs.optimizer.variables, ours.optimizer.variables):
        np.testing.assert_allclose(keras.ops.convert_to_numpy(a.value), b.numpy(), rtol=1e-6)


def test_model_checkpoint_writes_a_loadable_h5(tmp_path):
    model = _conv_model(fkeras)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    path = tmp_path / "best.h5"
    model.fit(X, Y, epochs=1, verbose=0,
              callbacks=[fkeras.callbacks.ModelCheckpoint(str(path))])
    np.testing.assert_allclose(_out(fkeras.models.load_model(path)), _out(model), rtol=1e-6)


def test_tf_keras_layout_loads(tmp_path):
    # The layout tf_keras 2.x writes: Keras 2 layer configs, byte-string attributes, weight
    # names with ":0", and an optimizer state in TF's own variable order (not restorable:
    # a warning, and the optimizer starts fresh).
    config = {"class_name": "Sequential", "config": {"name": "sequential", "layers": [
        {"class_name": "InputLayer", "config": {"batch_input_shape": [None, 3],
                                                "dtype": "float32", "sparse": False,
                                                "ragged": False, "name": "dense_input"}},
        {"class_name": "Dense", "config": {
            "name": "dense", "trainable": True, "dtype": "float32", "units": 2,
            "activation": "relu", "use_bias": True,
            "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": None}},
            "bias_initializer": {"class_name": "Zeros", "config": {}},
            "kernel_regularizer": None, "bias_regularizer": None,
            "activity_regularizer": None, "kernel_constraint": None,
            "bias_constraint": None}}]}}
    training = {"loss": "mse", "metrics": ["mae"], "weighted_metrics": None,
                "loss_weights": None,
                "optimizer_config": {"class_name": "Adam", "config": {
                    "name": "Adam", "learning_rate": 0.001, "beta_1": 0.9, "beta_2": 0.999,
                    "epsilon": 1e-07, "amsgrad": False}}}
    kernel = np.arange(6, dtype=np.float32).reshape(3, 2)
    bias = np.array([1.0, -20.0], np.float32)
    path = tmp_path / "tf_keras.h5"
    with h5py.File(path, "w") as f:
        f.attrs["backend"] = "tensorflow"
        f.attrs["keras_version"] = "2.15.0"
        f.attrs["model_config"] = json.dumps(config).encode()
        f.attrs["training_config"] = json.dumps(training).encode()
        weights = f.create_group("model_weights")
        weights.attrs["layer_names"] = [b"dense"]
        dense = weights.create_group("dense")
        dense.attrs["weight_names"] = [b"dense/kernel:0", b"dense/bias:0"]
        dense.create_dataset("dense/kernel:0", data=kernel)
        dense.create_dataset("dense/bias:0", data=bias)
        opt = f.create_group("optimizer_weights")
        opt.attrs["weight_names"] = [b"Adam/iter:0", b"Adam/dense/kernel/m:0"]
        opt.create_dataset("Adam/iter:0", data=np.int64(3))
        opt.create_dataset("Adam/dense/kernel/m:0", data=kernel)
    with pytest.warns(UserWarning, match="optimizer state"):
        model = fkeras.models.load_model(path)
    assert type(model).__name__ == "Sequential" and model.compiled
    x = np.ones((1, 3), np.float32)
    np.testing.assert_allclose(model.predict(x, verbose=0), np.maximum(x @ kernel + bias, 0))
