"""KerasFileEditor: reading files written by fkeras and by real Keras, compare, edits, save."""

import numpy as np
import pytest

import fkeras

h5py = pytest.importorskip("h5py")


def _fk_model(units=(3, 2), names=("d1", "d2")):
    return fkeras.Sequential([fkeras.Input((4,))] + [fkeras.layers.Dense(u, name=n)
                                                     for u, n in zip(units, names)])


def _same_tree(a, b):
    assert list(a) == list(b)
    for key in a:
        if isinstance(a[key], dict):
            _same_tree(a[key], b[key])
        else:
            np.testing.assert_array_equal(a[key], b[key])


@pytest.fixture
def fk_files(tmp_path):
    model = _fk_model()
    model.compile("adam", "mse")
    model.fit(np.ones((4, 4)), np.ones((4, 2)), verbose=0)
    model.save(tmp_path / "m.keras")
    model.save_weights(tmp_path / "m.weights.h5")
    return model, tmp_path


@pytest.mark.parametrize("name", ["m.keras", "m.weights.h5"])
def test_reads_fkeras_files(fk_files, name, capsys):
    model, path = fk_files
    editor = fkeras.saving.KerasFileEditor(str(path / name))
    dense = editor.weights_dict["layers"]["dense"]  # files name layers by class, as Keras
    np.testing.assert_array_equal(dense["0"], model.layers[0].kernel.numpy())
    np.testing.assert_array_equal(dense["1"], model.layers[0].bias.numpy())
    assert "optimizer" in editor.weights_dict
    editor.summary()
    assert "dense_1" in capsys.readouterr().out
    assert (editor.config is not None) == name.endswith(".keras")


def test_compare_and_edit_then_load(fk_files, tmp_path):
    model, path = fk_files
    editor = fkeras.saving.KerasFileEditor(str(path / "m.weights.h5"))
    editor.delete_object("optimizer")
    assert editor.compare(_fk_model()) == {"status": "success", "error_count": 0,
                                           "match_count": 6}
    other = _fk_model(units=(5, 2))
    result = editor.compare(other)
    assert result["status"] == "error" and result["error_count"] >= 2
    editor.add_weights("layers/dense", {"0": np.ones((4, 5), np.float32),
                                        "1": np.ones(5, np.float32)})
    editor.add_weights("dense_1", {"0": np.ones((5, 2), np.float32)})
    assert editor.compare(other)["status"] == "success"
    editor.save(str(tmp_path / "fixed.weights.h5"))
    other.load_weights(str(tmp_path / "fixed.weights.h5"))
    np.testing.assert_array_equal(other.layers[0].kernel.numpy(), np.ones((4, 5)))
    np.testing.assert_array_equal(other.layers[1].bias.numpy(), model.layers[1].bias.numpy())
    editor.rename_object("dense", "renamed")
    assert editor.compare(other)["status"] == "error"


def test_weight_edits_and_errors(fk_files, tmp_path):
    _, path = fk_files
    editor = fkeras.saving.KerasFileEditor(str(path / "m.keras"))
    editor.delete_weight("layers/dense_1", "1")
    assert list(editor.weights_dict["layers"]["dense_1"]) == ["0"]
    editor.add_weights("dense_1", {"1": np.full(2, 7.0, np.float32)})
    np.testing.assert_array_equal(editor.weights_dict["layers"]["dense_1"]["1"], [7.0, 7.0])
    editor.add_object("layers/extra", {"0": np.zeros((2, 2))})
    res = editor.compare(_fk_model())
    assert res["status"] == "error"
    editor.delete_object("layers/extra")
    with pytest.raises(ValueError, match="occurs more than once"):
        editor.delete_weight("0", "1")
    with pytest.raises(ValueError, match="does not appear"):
        editor.rename_object("nope", "x")
    with pytest.raises(ValueError, match="not found in model"):
        editor.delete_object("layers/nope")
    with pytest.raises(ValueError, match="leaf name"):
        editor.rename_object("dense_1", "a/b")
    with pytest.raises(ValueError, match="should be a dict"):
        editor.add_weights("dense_1", [1, 2])
    with pytest.raises(ValueError, match="Weight 5 not found"):
        editor.delete_weight("dense_1", "5")
    with pytest.raises(ValueError, match="`.weights.h5` extension"):
        editor.save(str(tmp_path / "x.keras"))
    with pytest.raises(ValueError, match="Invalid filename"):
        fkeras.saving.KerasFileEditor(str(tmp_path / "x.h5"))


def test_refuses_links_and_external_data(tmp_path):
    with h5py.File(tmp_path / "a.weights.h5", "w") as f:
        f.create_dataset("layers/dense/vars/0", data=np.ones(2))
        f["layers/dense/vars/1"] = h5py.SoftLink("/layers/dense/vars/0")
    with pytest.raises(ValueError, match="Not allowed: H5 file with SoftLink"):
        fkeras.saving.KerasFileEditor(str(tmp_path / "a.weights.h5"))
    with h5py.File(tmp_path / "b.weights.h5", "w") as f:
        f["layers"] = h5py.ExternalLink("other.h5", "/x")
    with pytest.raises(ValueError, match="ExternalLink"):
        fkeras.saving.KerasFileEditor(str(tmp_path / "b.weights.h5"))
    (tmp_path / "raw.bin").write_bytes(np.ones(4, "<f8").tobytes())
    with h5py.File(tmp_path / "c.weights.h5", "w") as f:
        f.create_dataset("layers/dense/vars/0", shape=(4,), dtype="<f8",
                         external=[(str(tmp_path / "raw.bin"), 0, 32)])
    with pytest.raises(ValueError, match="external"):
        fkeras.saving.KerasFileEditor(str(tmp_path / "c.weights.h5"))


def test_refuses_unsafe_archive(tmp_path):
    import zipfile

    with zipfile.ZipFile(tmp_path / "bad.keras", "w") as zf:
        zf.writestr("../config.json", "{}")
    with pytest.raises(ValueError, match="path-traversal"):
        fkeras.saving.KerasFileEditor(str(tmp_path / "bad.keras"))


@pytest.fixture
def keras_files(tmp_path):
    keras = pytest.importorskip("keras")
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, name="d1"),
                              keras.layers.BatchNormalization(name="bn"),
                              keras.layers.Dense(2, name="d2")])
    model.compile("adam", "mse")
    model.fit(np.ones((4, 4)), np.ones((4, 2)), verbose=0)
    model.save(tmp_path / "k.keras")
    model.save_weights(tmp_path / "k.weights.h5")
    return keras, model, tmp_path


@pytest.mark.parametrize("name", ["k.keras", "k.weights.h5"])
def test_keras_files_read_as_keras_reads_them(keras_files, name):
    keras, _, path = keras_files
    ours = fkeras.saving.KerasFileEditor(str(path / name))
    theirs = keras.saving.KerasFileEditor(str(path / name))
    _same_tree(ours.weights_dict, theirs.weights_dict)
    assert ours.config == theirs.config and ours.metadata == theirs.metadata


@pytest.mark.parametrize("units,names", [((3, 2), ("d1", "d2")), ((5, 2), ("d1", "d2")),
                                         ((3, 2), ("d1", "other"))])
def test_compare_counts_as_keras(keras_files, units, names):
    keras, _, path = keras_files
    ref_fk = fkeras.Sequential([fkeras.Input((4,)), fkeras.layers.Dense(units[0], name=names[0]),
                                fkeras.layers.BatchNormalization(name="bn"),
                                fkeras.layers.Dense(units[1], name=names[1])])
    ref_k = keras.Sequential([keras.Input((4,)), keras.layers.Dense(units[0], name=names[0]),
                              keras.layers.BatchNormalization(name="bn"),
                              keras.layers.Dense(units[1], name=names[1])])
    for editor_cls, ref in ((fkeras.saving.KerasFileEditor, ref_fk),
                            (keras.saving.KerasFileEditor, ref_k)):
        editor = editor_cls(str(path / "k.keras"))
        editor.delete_object("optimizer")
        if editor_cls is keras.saving.KerasFileEditor:
            want = editor.compare(ref)
        else:
            got = editor.compare(ref)
    assert got == want


def test_edited_keras_file_loads_in_keras_and_fkeras(keras_files, tmp_path):
    keras, model, path = keras_files
    editor = fkeras.saving.KerasFileEditor(str(path / "k.keras"))
    editor.delete_object("optimizer")
    editor.rename_object("dense_1", "head")
    editor.resave_weights(str(tmp_path / "edited.weights.h5"))
    target = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, name="d1"),
                               keras.layers.BatchNormalization(name="bn"),
                               keras.layers.Dense(2, name="head")])
    with pytest.raises(ValueError):  # the renamed object no longer matches the layout
        target.load_weights(str(tmp_path / "edited.weights.h5"))
    editor.rename_object("head", "dense_1")
    editor.resave_weights(str(tmp_path / "edited.weights.h5"))
    target.load_weights(str(tmp_path / "edited.weights.h5"))
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(target(x)),
                               keras.ops.convert_to_numpy(model(x)), rtol=1e-6)
    ours = fkeras.Sequential([fkeras.Input((4,)), fkeras.layers.Dense(3, name="d1"),
                              fkeras.layers.BatchNormalization(name="bn"),
                              fkeras.layers.Dense(2, name="head")])
    ours.load_weights(str(tmp_path / "edited.weights.h5"))  # noqa: the layout is by class
    np.testing.assert_allclose(np.asarray(ours(x)), keras.ops.convert_to_numpy(model(x)),
                               rtol=1e-5, atol=1e-6)
