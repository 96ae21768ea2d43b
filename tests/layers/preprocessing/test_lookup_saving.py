"""`.keras` files with lookup and text layers: vocabularies as Keras 3's assets
(`assets/<layer path>/vocabulary.txt`), tf_idf weights under "idf_weights", given
vocabularies in the config; round trips fkeras -> fkeras (zipped and directory layouts),
Keras 3 -> fkeras (a file Keras wrote, `make_keras_text_model.py`) and fkeras -> Keras 3
(live, when Keras can build these layers); configs with Keras's keys; hostile archives."""

import io
import json
import os
import zipfile

import numpy as np
import pytest

import fkeras
from lookup_cases import keras_layers_or_none
from make_keras_text_model import HERE, INPUTS, build

with open(os.path.join(HERE, "keras_text_model.json"), encoding="utf-8") as _f:
    RECORD = json.load(_f)
KERAS_FILE = os.path.join(HERE, "keras_text_model.keras")


def _inputs():
    return [np.array(INPUTS["text"]), np.array(INPUTS["words"]),
            np.array(INPUTS["ints"], dtype=np.int64)]


def _fkeras_model():
    fkeras.utils.set_random_seed(0)
    return build(fkeras.layers, fkeras.Input, fkeras.Model)


def _assert_outputs(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64),
                                   rtol=1e-5, atol=1e-6)


def test_keras_file_loads_in_fkeras():
    model = fkeras.models.load_model(KERAS_FILE)
    assert model.get_layer("tv").get_vocabulary(include_special_tokens=True) == \
        RECORD["tv_vocabulary"]
    assert model.get_layer("sl").get_vocabulary() == RECORD["sl_vocabulary"]
    _assert_outputs(model.predict(_inputs(), verbose=0), RECORD["outputs"])
    _assert_outputs(model(_inputs()), RECORD["outputs"])


@pytest.mark.parametrize("name", ["tv", "sl", "il"])
def test_config_keys_and_values_match_keras(name):
    layer = _fkeras_model().get_layer(name)
    config = {k: v for k, v in layer.get_config().items() if k != "dtype"}
    assert config == RECORD[f"{name}_config"]


def test_fkeras_archive_has_keras_layout():
    model = _fkeras_model()
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"fk_layout_{os.getpid()}.keras")
    model.save(path)
    try:
        with zipfile.ZipFile(path) as ours, zipfile.ZipFile(KERAS_FILE) as theirs:
            names = sorted(n for n in ours.namelist() if n.startswith("assets/"))
            assert names == sorted(n for n in theirs.namelist() if n.startswith("assets/"))
            for n in names:
                assert ours.read(n) == theirs.read(n), n
            ours_h5 = io.BytesIO(ours.read("model.weights.h5"))
            theirs_h5 = io.BytesIO(theirs.read("model.weights.h5"))
    finally:
        os.remove(path)
    import h5py

    with h5py.File(ours_h5, "r") as f, h5py.File(theirs_h5, "r") as g:
        for group in ("layers/text_vectorization/vars",
                      "layers/text_vectorization/_lookup_layer/vars"):
            assert list(f[group]) == list(g[group]) == ["idf_weights"]
            np.testing.assert_allclose(f[group]["idf_weights"][()],
                                       g[group]["idf_weights"][()], rtol=1e-6)
        assert len(f["layers/string_lookup/vars"]) == len(g["layers/string_lookup/vars"]) == 0


@pytest.mark.parametrize("zipped", [True, False])
def test_fkeras_round_trip(tmp_path, zipped):
    model = _fkeras_model()
    x = _inputs()
    before = model.predict(x, verbose=0)
    path = tmp_path / ("m.keras" if zipped else "m_dir")
    model.save(path, zipped=zipped)
    loaded = fkeras.models.load_model(path)
    _assert_outputs(loaded.predict(x, verbose=0), before)
    assert loaded.get_layer("sl").get_vocabulary() == model.get_layer("sl").get_vocabulary()
    np.testing.assert_array_equal(loaded.get_layer("tv")._lookup_layer.idf_weights,
                                  model.get_layer("tv")._lookup_layer.idf_weights)


def test_fkeras_file_loads_in_keras(tmp_path):
    layers = keras_layers_or_none()
    if layers is None:
        pytest.skip("Keras 3 needs TensorFlow for its lookup layers")
    import keras

    from make_keras_text_model import keras_outputs

    model = _fkeras_model()
    path = tmp_path / "fk.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    assert loaded.get_layer("tv").get_vocabulary() == model.get_layer("tv").get_vocabulary()
    _assert_outputs(keras_outputs(loaded), model.predict(_inputs(), verbose=0))


def _rewrite(path, out, member, data):
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            if info.filename != member:
                dst.writestr(info, src.read(info.filename))
        dst.writestr(member, data)


def test_oversized_asset_is_refused(tmp_path, monkeypatch):
    from fkeras.saving import assets_io

    monkeypatch.setattr(assets_io, "ASSETS_LIMIT", 2**20)
    out = tmp_path / "big.keras"
    _rewrite(KERAS_FILE, out, "assets/layers/string_lookup/vocabulary.txt", b"x\n" * 2**20)
    with pytest.raises(ValueError, match="assets declare"):
        fkeras.models.load_model(out)


def test_asset_bomb_is_refused(tmp_path):
    out = tmp_path / "bomb.keras"
    with zipfile.ZipFile(KERAS_FILE) as src, \
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info.filename))
        dst.writestr("assets/layers/tv/extra.txt", b"\0" * (64 * 2**20))
    with pytest.raises(ValueError, match="decompression bomb"):
        fkeras.models.load_model(out)


def test_vocabulary_path_in_config_refused_in_safe_mode(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("a\nb\n")
    with zipfile.ZipFile(KERAS_FILE) as src:
        config = json.loads(src.read("config.json"))
    for layer in config["config"]["layers"]:
        if layer["config"].get("name") == "sl":
            layer["config"]["vocabulary"] = str(vocab)
    out = tmp_path / "path.keras"
    _rewrite(KERAS_FILE, out, "config.json", json.dumps(config).encode())
    with pytest.raises(ValueError, match="outside of the model archive"):
        fkeras.models.load_model(out)


def test_vocabulary_file_argument(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("earth\nwind\nfire\n", encoding="utf-8")
    layer = fkeras.layers.StringLookup(vocabulary=str(vocab))
    np.testing.assert_array_equal(np.asarray(layer(np.array(["wind", "x", "fire"]))),
                                  [2, 0, 3])
    assert layer.get_config()["vocabulary"] is None  # saved as an asset instead
    with pytest.raises(ValueError, match="does not exist"):
        fkeras.layers.StringLookup(vocabulary=str(tmp_path / "missing.txt"))


def test_legacy_h5_refuses_adapted_vocabularies(tmp_path):
    model = _fkeras_model()
    with pytest.raises(ValueError, match="legacy HDF5 format cannot hold"):
        model.save(tmp_path / "model.h5")
    assert not (tmp_path / "model.h5").exists()
