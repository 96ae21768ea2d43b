"""Corrupted `.keras` and `.weights.h5` files: every load either succeeds or raises a
ValueError (TypeError where Keras raises it for a config a class cannot take), never h5py's
RuntimeError / KeyError / OverflowError from a damaged HDF5 structure, nor an AttributeError
or KeyError from a config entry of the wrong type; a failed load changes no variable."""

import io
import json
import random
import zipfile

import numpy as np
import pytest

import fkeras

pytest.importorskip("h5py")


def _model():
    inp = fkeras.Input((4,))
    out = fkeras.layers.Dense(2)(fkeras.layers.Dense(3, activation="relu")(inp))
    model = fkeras.Model(inp, out)
    model.compile("adam", "mse")
    model.fit(np.ones((4, 4)), np.ones((4, 2)), verbose=0)
    return model


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("corrupt") / "base.keras"
    _model().save(path)
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist()}


def _write(path, members):
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)


def _mutate_json(data, rnd):
    config = json.loads(data)

    def walk(node, depth=0):
        if isinstance(node, dict) and node:
            key = rnd.choice(sorted(node))
            if rnd.random() < 0.3 or depth > 6:
                node[key] = rnd.choice([None, -1, 1e30, "x", [], {}, 2 ** 40, [2 ** 31, -5]])
            else:
                walk(node[key], depth + 1)
        elif isinstance(node, list) and node:
            i = rnd.randrange(len(node))
            if rnd.random() < 0.3:
                node[i] = rnd.choice([None, -1, "zz", 10 ** 12])
            else:
                walk(node[i], depth + 1)
    walk(config)
    return json.dumps(config).encode()


def _load_outcome(path):
    try:
        model = fkeras.models.load_model(path)
        model.predict(np.ones((2, 4)), verbose=0)
        return "ok"
    except (ValueError, TypeError) as e:
        return type(e).__name__


def test_mutated_archives_fail_cleanly(saved, tmp_path):
    rnd = random.Random(7)
    outcomes = set()
    for i in range(120):
        members = dict(saved)
        name = rnd.choice(sorted(members))
        if name.endswith(".json") and rnd.random() < 0.5:
            members[name] = _mutate_json(members[name], rnd)
        else:
            data = bytearray(members[name])
            for _ in range(rnd.randint(1, 20)):
                data[rnd.randrange(len(data))] = rnd.randrange(256)
            members[name] = bytes(data)
        path = tmp_path / f"m{i}.keras"
        _write(path, members)
        outcomes.add(_load_outcome(path))  # anything else propagates and fails the test
    assert "ValueError" in outcomes


def test_corrupt_weights_member_names_it_and_changes_nothing(saved, tmp_path):
    members = dict(saved)
    data = bytearray(members["model.weights.h5"])
    rnd = random.Random(3)
    model = _model()
    before = [w.copy() for w in model.get_weights()]
    path = tmp_path / "w.keras"
    for trial in range(40):  # damage the HDF5 metadata until reading fails
        damaged = bytearray(data)
        for _ in range(30):
            damaged[rnd.randrange(96, 2048)] = rnd.randrange(256)
        members["model.weights.h5"] = bytes(damaged)
        _write(path, members)
        try:
            model.load_weights(path)
        except ValueError as e:
            assert "model.weights.h5" in str(e) or "HDF5" in str(e)
            break
    else:
        pytest.fail("no damaged weights file was refused")
    for a, b in zip(model.get_weights(), before):
        np.testing.assert_array_equal(a, b)


def test_compile_config_of_the_wrong_type(saved, tmp_path):
    members = dict(saved)
    config = json.loads(members["config.json"])
    config["compile_config"] = "adam"
    members["config.json"] = json.dumps(config).encode()
    path = tmp_path / "c.keras"
    _write(path, members)
    with pytest.raises(ValueError, match="compile_config"):
        fkeras.models.load_model(path)


def test_corrupt_weights_h5_file(tmp_path):
    model = _model()
    path = tmp_path / "x.weights.h5"
    model.save_weights(path)
    data = bytearray(path.read_bytes())
    data[:8] = b"NOTHDF5!"
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="not a readable HDF5 file"):
        model.load_weights(path)
    with pytest.raises(FileNotFoundError):
        model.load_weights(tmp_path / "missing.weights.h5")


def _legacy_outcome(path):
    try:
        fkeras.models.load_model(path)
        return "ok"
    except (ValueError, TypeError) as e:
        return type(e).__name__


def test_damaged_legacy_h5_files_fail_cleanly(tmp_path):
    # A damaged legacy file crashed the HDF5 library itself (a segmentation fault reading a
    # string attribute); such files now fail in a forked probe and raise ValueError here.
    inp = fkeras.Input((4,))
    out = fkeras.layers.Dense(2)(fkeras.layers.LSTM(3)(fkeras.layers.Reshape((2, 2))(inp)))
    model = fkeras.Model(inp, out)
    model.compile("adam", "mse")
    model.fit(np.ones((4, 4)), np.ones((4, 2)), verbose=0)
    base = tmp_path / "base.h5"
    model.save(base)
    data = base.read_bytes()
    rnd = random.Random(1)
    outcomes = set()
    for i in range(80):
        damaged = bytearray(data)
        for _ in range(rnd.randint(1, 30)):
            damaged[rnd.randrange(len(damaged))] = rnd.randrange(256)
        path = tmp_path / f"d{i}.h5"
        path.write_bytes(bytes(damaged))
        outcomes.add(_legacy_outcome(path))
    assert "ValueError" in outcomes


def test_probe_turns_a_library_crash_into_a_value_error(tmp_path, monkeypatch):
    import os
    import signal

    from fkeras.saving import h5_probe

    path = tmp_path / "m.h5"
    fkeras.Sequential([fkeras.Input((2,)), fkeras.layers.Dense(1)]).save(path)
    # The forked child runs the patched reader: a crash of the HDF5 library, simulated.
    monkeypatch.setattr(h5_probe, "_read_everything",
                        lambda *args: os.kill(os.getpid(), signal.SIGSEGV))
    with pytest.raises(ValueError, match="crashed the HDF5 library"):
        fkeras.models.load_model(path)
    monkeypatch.setenv("FKERAS_H5_PROBE", "0")  # the probe off: the file itself is fine
    assert fkeras.models.load_model(path).count_params() == 3
