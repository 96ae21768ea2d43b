"""Bounded, all-or-nothing reading: zip members checked against their declared sizes and a
limit from the model's weights before anything is inflated; h5 datasets checked (links,
storage, count, shape, dtype) before any read; no variable changes unless every one
validates; the memory used while refusing a bomb measured in a fresh process."""

import json
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import fkeras
from fkeras.saving import archive_io, weights_h5

h5py = pytest.importorskip("h5py")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "security"))
import hostile_files as hf  # noqa: E402

HERE = os.path.dirname(__file__)


def two_layer_model():
    inp = fkeras.Input((3,), name="x")
    h = fkeras.layers.Dense(4, name="a")(inp)
    model = fkeras.Model(inp, fkeras.layers.Dense(2, name="b")(h))
    model.compile("adam", "mse")
    model.fit(np.ones((4, 3)), np.ones((4, 2)), verbose=0)
    return model


def snapshot(model):
    return [v.numpy() for v in model.weights] + [v.numpy() for v in model.optimizer.variables]


@pytest.mark.parametrize("spoil", ["string_last_layer", "shape_last_layer", "optimizer_shape",
                                   "optimizer_string"])
def test_loading_is_all_or_nothing(tmp_path, spoil):
    source = two_layer_model()
    source.save_weights(tmp_path / "w.weights.h5")
    with h5py.File(tmp_path / "w.weights.h5", "a") as f:
        if spoil.startswith("optimizer"):
            group, key = f["optimizer/vars"], str(len(f["optimizer/vars"]) - 1)
        else:
            group, key = f["layers/dense_1/vars"], "1"
        shape = group[key].shape
        del group[key]
        if spoil.endswith("string") or spoil.startswith("string"):
            group.create_dataset(key, data=np.full(shape, "x", dtype="S1"))
        else:
            group.create_dataset(key, data=np.zeros(shape + (2,), "float32"))
    target = two_layer_model()
    before = snapshot(target)
    with pytest.raises(ValueError, match="numeric dtype|saved weight has shape"):
        target.load_weights(tmp_path / "w.weights.h5")
    for old, new in zip(before, snapshot(target)):
        np.testing.assert_array_equal(old, new)


def test_valid_files_load_whole(tmp_path):
    source = two_layer_model()
    source.save(tmp_path / "m.keras")
    size = os.path.getsize(tmp_path / "m.keras")
    loaded = fkeras.models.load_model(tmp_path / "m.keras")
    assert archive_io.weights_limit(loaded) > size
    for a, b in zip(snapshot(source), snapshot(loaded)):
        np.testing.assert_array_equal(a, b)


def test_weights_member_limit_is_proportional_to_the_model(tmp_path):
    model = hf.dense_model()
    limit = archive_io.weights_limit(model)
    assert limit < 2 * 2**20  # 40 bytes of weights: about a megabyte of slack, not gigabytes
    path = hf.write_zip_bomb(tmp_path / "m.keras", hf.base_config(), "model.weights.h5", 1,
                             limit + 1)
    with pytest.raises(ValueError, match="more than the .* this model can need"):
        fkeras.models.load_model(path)
    bigger = fkeras.Sequential([fkeras.Input((1000,)), fkeras.layers.Dense(1000)])
    assert archive_io.weights_limit(bigger) > 5 * weights_h5.nbytes(bigger.weights[0])


def test_config_member_cap(tmp_path):
    stored = tmp_path / "stored.keras"
    with zipfile.ZipFile(stored, "w") as zf:  # stored: no compression ratio to object to
        zf.writestr("config.json", b" " * (archive_io.CONFIG_LIMIT + 1))
    with pytest.raises(ValueError, match="'config.json' declares 8.00 MB .* more than the "
                                         "8.00 MB"):
        fkeras.models.load_model(stored)
    deflated = hf.write_zip_bomb(tmp_path / "m.keras", None, "config.json", 1, 2 * 2**20)
    with pytest.raises(ValueError, match="declares 2.00 MB but only .* are stored on disk"):
        fkeras.models.load_model(deflated)


def test_sizes_print_as_keras_does():
    assert archive_io.format_size(928) == "928.00 B"
    assert archive_io.format_size(401530) == "392.12 KB"
    assert archive_io.format_size(6 * 2**30) == "6.00 GB"


def test_refusing_bombs_stays_within_bounds():
    """< 2x the file's size + the model's weights (+ building the model itself, which any
    load of that config costs, measured on the benign file)."""
    result = subprocess.run([sys.executable, os.path.join(HERE, "measure_refusal.py")],
                            capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout.splitlines()[-1])
    model_bytes = figures["model_bytes"]
    for name, benign in [("zip bomb 6 GiB", ".keras"), ("h5 bomb 16 GiB in .keras", ".keras"),
                         ("h5 bomb 16 GiB .weights.h5", ".weights.h5")]:
        f = figures[name]
        assert f["error"] == "ValueError", name
        build = figures[f"benign {benign}"]["traced_peak"]
        assert f["traced_peak"] < 2 * f["file_size"] + model_bytes + build, (name, f)
        assert f["rss_growth"] < 2 * f["file_size"] + model_bytes + 16 * 2**20, (name, f)
