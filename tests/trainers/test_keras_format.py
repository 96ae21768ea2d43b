"""model.save / load_model in Keras 3's `.keras` format: the archive layout, round trips of
Functional (CNN with BatchNormalization, LSTM, two inputs) and Sequential models with their
compile config and optimizer state, errors, atomic writes, and files exchanged with real
Keras 3 both ways (skipped without keras)."""

import importlib.util
import json
import os
import zipfile

import numpy as np
import pytest

import fkeras
from fkeras import layers
from fkeras.saving import saving_lib

pytest.importorskip("h5py")


def cnn(lib=fkeras):
    inp = lib.Input((8, 8, 1), name="img")
    x = lib.layers.Conv2D(4, 3, padding="same", name="conv")(inp)
    x = lib.layers.BatchNormalization(name="bn")(x)
    x = lib.layers.Activation("relu")(x)
    x = lib.layers.MaxPooling2D(2)(x)
    x = lib.layers.Flatten()(x)
    return lib.Model(inp, lib.layers.Dense(3, activation="softmax", name="out")(x))


def lstm(lib=fkeras):
    inp = lib.Input((5, 3))
    x = lib.layers.LSTM(6)(inp)
    return lib.Model(inp, lib.layers.Dense(2)(x))


def image_data(n=24, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(size=(n, 8, 8, 1)).astype("float32"), rng.integers(0, 3, n)


def trained_cnn():
    fkeras.utils.set_random_seed(0)
    model = cnn()
    model.compile(fkeras.optimizers.Adam(0.01), "sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    x, y = image_data()
    model.fit(x, y, batch_size=8, epochs=2, verbose=0)
    return model, x, y


def test_archive_layout_matches_keras3(tmp_path):
    model, _, _ = trained_cnn()
    path = tmp_path / "m.keras"
    model.save(path)
    with zipfile.ZipFile(path) as zf:
        assert sorted(zf.namelist()) == ["config.json", "metadata.json", "model.weights.h5"]
        assert all(i.compress_type == zipfile.ZIP_STORED for i in zf.infolist())
        config = json.loads(zf.read("config.json"))
        metadata = json.loads(zf.read("metadata.json"))
    assert set(metadata) == {"keras_version", "date_saved"}
    assert config["class_name"] == "Functional" and config["registered_name"] == "Functional"
    assert config["config"]["input_layers"] == ["img", 0, 0]
    entry = {e["name"]: e for e in config["config"]["layers"]}["bn"]
    assert entry["module"] == "keras.layers" and entry["class_name"] == "BatchNormalization"
    compile_config = config["compile_config"]
    assert compile_config["optimizer"]["class_name"] == "Adam"
    assert compile_config["loss"] == "sparse_categorical_crossentropy"
    assert compile_config["metrics"] == ["accuracy"]
    assert {"run_eagerly", "steps_per_execution", "jit_compile"} <= set(compile_config)


def test_round_trip_restores_weights_compile_config_and_optimizer_state(tmp_path):
    model, x, y = trained_cnn()
    path = tmp_path / "m.keras"
    model.save(path)
    restored = fkeras.models.load_model(path)
    assert restored is not model and restored.name == model.name
    saved_predictions = model.predict(x, verbose=0)
    np.testing.assert_array_equal(saved_predictions, restored.predict(x, verbose=0))
    assert isinstance(restored.optimizer, fkeras.optimizers.Adam)
    assert np.isclose(float(restored.optimizer.learning_rate), 0.01)
    assert int(restored.optimizer.iterations) == int(model.optimizer.iterations) == 6
    for a, b in zip(model.optimizer.variables, restored.optimizer.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    # Training goes on exactly as it would have without the round trip.
    h1 = model.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0)
    h2 = restored.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0)
    assert h1.history == h2.history
    for a, b in zip(model.get_weights(), restored.get_weights()):
        np.testing.assert_array_equal(a, b)
    uncompiled = fkeras.saving.load_model(path, compile=False)
    assert not uncompiled.compiled
    np.testing.assert_array_equal(uncompiled.predict(x, verbose=0), saved_predictions)


def test_lstm_two_inputs_and_sequential_round_trip(tmp_path):
    fkeras.utils.set_random_seed(1)
    rng = np.random.default_rng(0)
    seq = rng.standard_normal((4, 5, 3)).astype("float32")
    model = lstm()
    fkeras.saving.save_model(model, tmp_path / "lstm.keras")
    restored = fkeras.saving.load_model(tmp_path / "lstm.keras")
    np.testing.assert_array_equal(model.predict(seq, verbose=0), restored.predict(seq, verbose=0))
    assert restored.optimizer is None or not restored.compiled

    a, b = fkeras.Input((3,), name="a"), fkeras.Input((2,), name="b")
    merged = layers.Concatenate()([layers.Dense(4, name="da")(a), b])
    two = fkeras.Model([a, b], layers.Dense(1, name="y")(merged))
    two.compile("sgd", {"y": "mse"}, metrics={"y": ["mae"]})
    two.save(tmp_path / "two.keras")
    back = fkeras.models.load_model(tmp_path / "two.keras")
    xa, xb = np.ones((2, 3), "float32"), np.ones((2, 2), "float32")
    np.testing.assert_array_equal(two.predict([xa, xb], verbose=0),
                                  back.predict([xa, xb], verbose=0))
    assert back.input_names == ["a", "b"]
    back.fit([xa, xb], np.ones((2, 1)), verbose=0)

    sequential = fkeras.Sequential([fkeras.Input((4,)), layers.Dense(3), layers.Dense(1)])
    sequential.save(tmp_path / "seq.keras")
    again = fkeras.models.load_model(tmp_path / "seq.keras")
    assert isinstance(again, fkeras.Sequential)
    np.testing.assert_array_equal(sequential.predict(np.ones((2, 4)), verbose=0),
                                  again.predict(np.ones((2, 4)), verbose=0))


def test_errors(tmp_path):
    model = cnn()
    with pytest.raises(ValueError, match="Invalid filepath extension for saving"):
        model.save(tmp_path / "m.h5x")
    with pytest.raises(ValueError, match="File format not supported"):
        fkeras.models.load_model(tmp_path / "m.weights.h5")
    with pytest.raises(ValueError, match="File not found"):
        fkeras.models.load_model(tmp_path / "missing.keras")
    model.save(tmp_path / "m.keras")
    with pytest.raises(ValueError, match="exists and overwrite=False"):
        model.save(tmp_path / "m.keras", overwrite=False)
    (tmp_path / "bad.keras").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a `.keras` zip archive"):
        fkeras.models.load_model(tmp_path / "bad.keras")

    class Sub(fkeras.Model):
        def call(self, x):
            return x

    with pytest.raises(ValueError, match="has not yet been built"):
        Sub().save(tmp_path / "sub.keras")
    sub = Sub()
    sub(np.ones((2, 3), "float32"))
    sub.save(tmp_path / "sub.keras")  # subclassed models: tests/saving/test_subclassed_models.py
    restored = fkeras.models.load_model(tmp_path / "sub.keras", custom_objects={"Sub": Sub})
    assert type(restored) is Sub and restored.get_build_config() == {"input_shape": (2, 3)}


def test_an_interrupted_save_leaves_the_previous_file(tmp_path, monkeypatch):
    model, x, _ = trained_cnn()
    path = tmp_path / "m.keras"
    model.save(path)
    before = path.read_bytes()

    def broken(tmp, *args):
        with open(tmp, "wb") as f:
            f.write(b"PK\x03\x04 half a zip")
        raise OSError("disk full")

    monkeypatch.setattr(saving_lib, "write_archive", broken)
    with pytest.raises(OSError, match="disk full"):
        model.save(path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["m.keras"]  # no temporary file left behind


def test_model_checkpoint_saves_whole_models(tmp_path):
    model, x, y = trained_cnn()
    ck = fkeras.callbacks.ModelCheckpoint(str(tmp_path / "ck_{epoch}.keras"))
    model.fit(x, y, epochs=2, batch_size=8, verbose=0, callbacks=[ck])
    assert sorted(os.listdir(tmp_path)) == ["ck_1.keras", "ck_2.keras"]
    restored = fkeras.models.load_model(tmp_path / "ck_2.keras")
    np.testing.assert_array_equal(restored.predict(x, verbose=0), model.predict(x, verbose=0))


# ---- exchange with real Keras 3 ----
def _keras():
    if "KERAS_BACKEND" not in os.environ and importlib.util.find_spec("torch") is not None:
        os.environ["KERAS_BACKEND"] = "torch"  # Keras 3 defaults to TensorFlow
    return pytest.importorskip("keras")


@pytest.mark.parametrize("build", [cnn, lstm])
def test_files_written_by_fkeras_load_in_keras(tmp_path, build):
    keras = _keras()
    fkeras.utils.set_random_seed(0)
    model = build()
    model.compile(fkeras.optimizers.Adam(0.01), "mse", metrics=["mae"])
    x = (image_data()[0] if build is cnn else
         np.random.default_rng(0).standard_normal((6, 5, 3)).astype("float32"))
    model.fit(x, np.zeros((len(x), model.output_shape[-1])), verbose=0)
    model.save(tmp_path / "f.keras")
    theirs = keras.saving.load_model(tmp_path / "f.keras")
    np.testing.assert_allclose(keras.ops.convert_to_numpy(theirs.predict(x, verbose=0)),
                               model.predict(x, verbose=0), rtol=1e-5, atol=1e-6)
    assert type(theirs.optimizer).__name__ == "Adam"
    assert int(keras.ops.convert_to_numpy(theirs.optimizer.iterations)) == 1
    for a, b in zip(theirs.optimizer.variables, model.optimizer.variables):
        np.testing.assert_allclose(keras.ops.convert_to_numpy(a), b.numpy(), rtol=1e-6)


@pytest.mark.parametrize("build", [cnn, lstm])
def test_files_written_by_keras_load_in_fkeras(tmp_path, build):
    keras = _keras()
    theirs = build(keras)
    theirs.compile(keras.optimizers.Adam(0.01), "mse", metrics=["mae"])
    x = (image_data()[0] if build is cnn else
         np.random.default_rng(0).standard_normal((6, 5, 3)).astype("float32"))
    theirs.fit(x, np.zeros((len(x), theirs.output_shape[-1])), verbose=0)
    theirs.save(tmp_path / "k.keras")
    ours = fkeras.models.load_model(tmp_path / "k.keras")
    np.testing.assert_allclose(ours.predict(x, verbose=0),
                               keras.ops.convert_to_numpy(theirs.predict(x, verbose=0)),
                               rtol=1e-5, atol=1e-6)
    assert isinstance(ours.optimizer, fkeras.optimizers.Adam)
    assert int(ours.optimizer.iterations) == 1
    for a, b in zip(theirs.optimizer.variables, ours.optimizer.variables):
        np.testing.assert_allclose(keras.ops.convert_to_numpy(a), b.numpy(), rtol=1e-6)
    ours.fit(x, np.zeros((len(x), ours.output_shape[-1])), verbose=0)  # trains on


def zoo(lib):
    """Most built-in layer kinds in one model (for the exchange tests)."""
    L = lib.layers
    img, seq = lib.Input((6, 6, 2), name="img"), lib.Input((4,), name="tokens")
    x = L.Conv2D(3, 3, padding="same", activation="relu")(img)
    x = L.BatchNormalization(momentum=0.9)(x)
    x = L.AveragePooling2D(2)(L.MaxPooling2D(1)(x))
    x = L.Dropout(0.2)(L.Flatten()(x))
    e = L.Embedding(10, 3)(seq)
    r = L.Concatenate()([L.GRU(3)(e), L.SimpleRNN(3)(e), L.LSTM(3)(e)])
    h = L.Add()([L.Dense(4)(x), L.Dense(4)(r)])
    h = L.Reshape((2, 2))(L.Activation("tanh")(h))
    return lib.Model([img, seq], L.Dense(1)(L.Flatten()(h)))


def test_many_layer_kinds_are_exchanged_with_keras(tmp_path):
    keras = _keras()
    rng = np.random.default_rng(0)
    data = [rng.uniform(size=(3, 6, 6, 2)).astype("float32"), rng.integers(0, 10, (3, 4))]
    ours = zoo(fkeras)
    ours.save(tmp_path / "f.keras")
    theirs = keras.saving.load_model(tmp_path / "f.keras")
    np.testing.assert_allclose(keras.ops.convert_to_numpy(theirs.predict(data, verbose=0)),
                               ours.predict(data, verbose=0), rtol=1e-5, atol=1e-6)
    theirs.save(tmp_path / "k.keras")
    back = fkeras.models.load_model(tmp_path / "k.keras")
    np.testing.assert_allclose(back.predict(data, verbose=0), ours.predict(data, verbose=0),
                               rtol=1e-5, atol=1e-6)
    sequential = fkeras.Sequential([fkeras.Input((6,)), layers.Dense(5, activation="relu"),
                                    layers.Dense(2)])
    sequential.save(tmp_path / "s.keras")
    theirs = keras.saving.load_model(tmp_path / "s.keras")
    assert type(theirs).__name__ == "Sequential"
    x = rng.uniform(size=(2, 6)).astype("float32")
    np.testing.assert_allclose(keras.ops.convert_to_numpy(theirs.predict(x, verbose=0)),
                               sequential.predict(x, verbose=0), rtol=1e-5, atol=1e-6)
