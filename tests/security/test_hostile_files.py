"""Hostile `.keras` / `.weights.h5` files: none of the payloads runs, each is refused with a
clear ValueError/TypeError (never another exception, a crash or a hang).

Every payload would only create `marker` if it ran: dangerous callables (os.system,
subprocess.Popen, eval, ...) are replaced by a stub that creates the marker for the duration
of the load, a module put on sys.path creates it when imported or called, a bytecode lambda
creates it when called, and pydoc.pipepager would run `touch marker` through the shell.
"""

import builtins
import importlib
import json
import os
import re
import subprocess
import sys
import zipfile

import pytest

import fkeras
from fkeras import layers

pytest.importorskip("h5py")

import hostile_files as hf  # noqa: E402

PATCHED = [(os, "system"), (subprocess, "Popen"), (subprocess, "run"), (sys, "exit"),
           (builtins, "eval"), (builtins, "exec"), (builtins, "input"),
           (importlib, "import_module"), (fkeras.config, "set_floatx"),
           (fkeras.config, "enable_unsafe_deserialization")]
if hasattr(os, "posix_spawn"):
    PATCHED.append((os, "posix_spawn"))

MODULE = "fk_hostile_payload"


def fe(module, name, registered_name=None):
    return hf.function_entry(module, name, registered_name)


def bytecode(marker):
    """A serialized Python lambda that creates the marker when called."""
    fn = lambda x, _m=str(marker): (open(_m, "w").close(), x)[1]  # noqa: E731
    return layers.Lambda(fn).get_config()["function"]


def with_layer(config, entry):
    """The base model with `entry` inserted between the input and the Dense layer."""
    entry = {"registered_name": None, "name": entry["config"]["name"],
             "inbound_nodes": [[["x", 0, 0, {}]]], **entry}
    layer_list = config["config"]["layers"]
    layer_list[-1]["inbound_nodes"] = [[[entry["name"], 0, 0, {}]]]
    layer_list.insert(1, entry)
    return config


def dense_with(**overrides):
    config = hf.base_config()
    config["config"]["layers"][-1]["config"].update(overrides)
    return config


def model_level(**overrides):
    config = hf.base_config()
    config.update(overrides)
    return config


def compiled(**overrides):
    config = hf.base_config()
    config["compile_config"] = {"optimizer": {"module": "keras.optimizers",
                                              "class_name": "Adam", "config": {},
                                              "registered_name": None},
                                "loss": "mse", "metrics": None, **overrides}
    return config


def h5_with_dense(extra=None, kernel=None):
    """Weights h5 bytes for dense_model() whose Dense group gets `extra(group, f)`."""
    import io

    import h5py
    import numpy as np

    buffer = io.BytesIO()
    with h5py.File(buffer, "w") as f:
        f.create_group("vars")
        g = f.create_group("layers/dense/vars")
        g.attrs["name"] = "d"
        if kernel is not None:
            g.create_dataset("0", data=kernel)
        g.create_dataset("1", data=np.zeros(2, "float32"))
        if extra is not None:
            extra(g, f)
    return buffer.getvalue()


def _soft(g, f):
    import numpy as np

    f.create_dataset("elsewhere/k", data=np.zeros((4, 2), "float32"))
    g["0"] = __import__("h5py").SoftLink("/elsewhere/k")


def _external_link(g, f):
    g["0"] = __import__("h5py").ExternalLink("other.h5", "/k")


def _external_dataset(tmp):
    def extra(g, f):
        raw = tmp / "raw.bin"
        raw.write_bytes(bytes(32))
        g.create_dataset("0", shape=(4, 2), dtype="float32", external=[(str(raw), 0, 32)])
    return extra


def _virtual(tmp):
    def extra(g, f):
        import h5py

        layout = h5py.VirtualLayout(shape=(4, 2), dtype="float32")
        layout[:] = h5py.VirtualSource(str(tmp / "src.h5"), "k", shape=(4, 2))
        g.create_virtual_dataset("0", layout)
    return extra


# Each entry: name -> function(tmp_path, marker) -> (path, loader kwargs); the loader is
# load_model for `.keras` paths, model.load_weights for `.weights.h5`.
def _keras(config, **kw):
    return lambda tmp, marker: (hf.write_keras(tmp / "p.keras", config(marker), **kw), {})


def _lam(function, arguments=None, **extra):
    return _keras(lambda m: hf.lambda_config(function(m), arguments(m) if arguments else None,
                                             **{k: v(m) for k, v in extra.items()}))


def _const(value):
    return lambda m: value


def _zip(members):
    def build(tmp, marker):
        path = tmp / "p.keras"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("config.json", json.dumps(hf.base_config()))
            for name, data in members(marker):
                zf.writestr(name, data)
        return path, {}
    return build


def _zip_json_bomb(tmp, marker):
    """A valid-looking JSON config (2**20 empty lists: 3 MiB of text, 67 MB of Python
    objects once parsed) deflated to 3 KB: refused by its inflation ratio."""
    path = tmp / "p.keras"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("config.json", '{"x": [' + ",".join(["[]"] * 2**20) + "]}")
    return path, {}


def _symlink_member(marker):
    info = zipfile.ZipInfo("assets/link")
    info.external_attr = (0o120777 << 16)
    return [(info, str(marker))]


def _weights(data):
    def build(tmp, marker):
        return hf.write_keras(tmp / "p.keras", hf.base_config(), weights=data(tmp)), {}
    return build


def _keras_weights(config, data):
    def build(tmp, marker):
        return hf.write_keras(tmp / "p.keras", config(), weights=data(tmp)), {}
    return build


def _optimizer_bomb(g, f):
    """Adam's six variables for dense_model(), the third declaring 16 GiB."""
    import numpy as np

    opt = f.create_group("optimizer/vars")
    shapes = [(), (), (65536, 65536), (4, 2), (2,), (2,)]
    for i, shape in enumerate(shapes):
        if i == 2:
            opt.create_dataset(str(i), shape=shape, dtype="float32", chunks=(1024, 1024),
                               compression="gzip", fillvalue=1.0)
        else:
            opt.create_dataset(str(i), data=np.zeros(shape, "float32"))


def _weights_file(data):
    def build(tmp, marker):
        path = tmp / "p.weights.h5"
        path.write_bytes(data(tmp))
        return path, {}
    return build


def _zip_bomb(member, chunks, declared):
    def build(tmp, marker):
        path = tmp / "p.keras"
        return hf.write_zip_bomb(path, hf.base_config(), member, chunks, declared), {}
    return build


PAYLOADS = {
    # Lambda functions named by module + name
    "lambda os.system": _lam(_const(fe("os", "system"))),
    "lambda posix.system": _lam(_const(fe("posix", "system"))),
    "lambda pydoc.pipepager cmd": _lam(_const(fe("pydoc", "pipepager")),
                                       lambda m: {"cmd": f"touch {m}"}),
    "lambda builtins.eval": _lam(_const(fe("builtins", "eval"))),
    "lambda builtins.exec": _lam(_const(fe("builtins", "exec"))),
    "lambda builtins.input": _lam(_const(fe("builtins", "input"))),
    "lambda subprocess.Popen": _lam(_const(fe("subprocess", "Popen"))),
    "lambda subprocess.run": _lam(_const(fe("subprocess", "run"))),
    "lambda sys.exit": _lam(_const(fe("sys", "exit"))),
    "lambda importlib.import_module": _lam(_const(fe("importlib", "import_module")),
                                           _const({"name": MODULE})),
    "lambda module on sys.path": _lam(_const(fe(MODULE, "touch"))),
    "lambda dotted name, no module": _lam(_const(fe(None, "os.system"))),
    "lambda keras.config.set_floatx": _lam(_const(fe("keras.config", "set_floatx"))),
    "lambda fkeras.config.enable_unsafe": _lam(_const(fe("fkeras.config",
                                                         "enable_unsafe_deserialization"))),
    "lambda keras.src saving_api.load_model": _lam(_const(fe("keras.src.saving.saving_api",
                                                             "load_model"))),
    "lambda private module attribute": _lam(_const(fe("fkeras.activations", "_nn"))),
    "lambda dunder of a namespace": _lam(_const(fe("keras.ops", "__builtins__"))),
    "lambda ops.apply dispatcher": _lam(_const(fe("keras.ops", "apply"))),
    "lambda fake ops submodule": _lam(_const(fe("fkeras.ops.os", "system"))),
    "lambda registered_name os>system": _lam(_const(fe("os", "system", "os>system"))),
    "lambda builtin with foreign registered_name": _lam(_const(fe("keras.activations", "relu",
                                                                  "os.system"))),
    "lambda output_shape os.system": _lam(_const(fe("keras.activations", "relu")),
                                          output_shape=_const(fe("os", "system"))),
    "lambda mask os.system": _lam(_const(fe("keras.activations", "relu")),
                                  mask=_const(fe("os", "system"))),
    "lambda bytecode, default safe_mode": _lam(bytecode),
    "lambda bytecode output_shape": _lam(_const(fe("keras.activations", "relu")),
                                         output_shape=bytecode),
    "lambda bytecode mask": _lam(_const(fe("keras.activations", "relu")), mask=bytecode),
    "lambda function as other dict": _lam(_const({"class_name": "system", "module": "os",
                                                  "config": {}})),
    # class names
    "model class_name os.system": _keras(lambda m: model_level(module="os",
                                                               class_name="system")),
    "model class_name models.load_model": _keras(lambda m: model_level(
        module="fkeras.models", class_name="load_model", registered_name=None)),
    "model registered_name os>system": _keras(lambda m: model_level(registered_name="os>system")),
    "model class_name a layer": _keras(lambda m: model_level(class_name="Dense",
                                                             registered_name=None)),
    "layer class_name os.system": _keras(lambda m: with_layer(
        hf.base_config(), {"module": "os", "class_name": "system", "config": {"name": "s"}})),
    "layer class_name load_model": _keras(lambda m: with_layer(
        hf.base_config(), {"module": "fkeras.models", "class_name": "load_model",
                           "config": {"name": "s"}})),
    "layer registered_name os.system": _keras(lambda m: with_layer(
        hf.base_config(), {"module": "os", "class_name": "Dense", "registered_name":
                           "os.system", "config": {"name": "s", "units": 4}})),
    "TimeDistributed wrapping a Lambda os.system": _keras(lambda m: with_layer(
        hf.base_config(), {"module": "keras.layers", "class_name": "TimeDistributed",
                           "config": {"name": "td", "layer": {
                               "module": "keras.layers", "class_name": "Lambda",
                               "config": {"name": "in", "function": fe("os", "system")}}}})),
    # nested sub-objects in a layer config
    "dense activation os.system": _keras(lambda m: dense_with(activation=fe("os", "system"))),
    "dense activation bad dict": _keras(lambda m: dense_with(
        activation={"class_name": "Activation", "config": "os.system"})),
    "dense activation dotted string": _keras(lambda m: dense_with(activation="os.system")),
    "dense activation bytecode": _keras(lambda m: dense_with(activation=bytecode(m))),
    "dense kernel_initializer os.system": _keras(lambda m: dense_with(kernel_initializer={
        "module": "os", "class_name": "system", "config": {}, "registered_name": None})),
    "dense kernel_initializer function": _keras(lambda m: dense_with(
        kernel_initializer=fe("os", "system"))),
    "dense kernel_regularizer os.system": _keras(lambda m: dense_with(kernel_regularizer={
        "module": "os", "class_name": "system", "config": {}, "registered_name": "os>system"})),
    "dense kernel_constraint os.system": _keras(lambda m: dense_with(kernel_constraint={
        "module": "os", "class_name": "system", "config": {}})),
    # compile config
    "compile loss os.system": _keras(lambda m: compiled(loss=fe("os", "system"))),
    "compile loss dotted string": _keras(lambda m: compiled(loss="os.system")),
    "compile loss class os.system": _keras(lambda m: compiled(loss={
        "module": "os", "class_name": "system", "config": {}})),
    "compile metric os.system": _keras(lambda m: compiled(metrics=[fe("os", "system")])),
    "compile optimizer os.system": _keras(lambda m: compiled(optimizer={
        "module": "os", "class_name": "system", "config": {}})),
    "compile lr schedule os.system": _keras(lambda m: compiled(optimizer={
        "module": "keras.optimizers", "class_name": "Adam", "config": {"learning_rate": {
            "module": "os", "class_name": "system", "config": {}}}})),
    # malformed JSON
    "config.json nested 100000 deep": _zip(lambda m: []),
    # zip archive
    "zip bomb: weights declare 6 GiB": _zip_bomb("model.weights.h5", 64, 6 * 2**30),
    "zip bomb: config.json inflates 256 MiB": _zip_bomb("config.json", 16, 16 * 2**24),
    "zip bomb: metadata.json inflates 256 MiB": _zip_bomb("metadata.json", 16, 16 * 2**24),
    "zip bomb: config.json of 3 MiB nested lists in 3 KB": _zip_json_bomb,
    "zip member ../marker": _zip(lambda m: [(f"../{m.name}", b"x")]),
    "zip member absolute path": _zip(lambda m: [(str(m), b"x")]),
    "zip member backslash traversal": _zip(lambda m: [(f"..\\{m.name}", b"x")]),
    "zip member drive letter": _zip(lambda m: [("C:/x", b"x")]),
    "zip member symlink": _zip(_symlink_member),
    "zip with 5000 members": _zip(lambda m: [(f"assets/{i}", b"") for i in range(5000)]),
    "zip duplicated config.json": _zip(lambda m: [("config.json", json.dumps(
        hf.lambda_config(fe("os", "system"))))]),
    # h5 weights
    "h5 bomb 16 GiB in .keras": _weights(lambda tmp: hf.h5_bomb_bytes()),
    "h5 bomb 16 GiB in .weights.h5": _weights_file(lambda tmp: hf.h5_bomb_bytes()),
    "h5 bomb in optimizer vars": _keras_weights(compiled, lambda tmp: h5_with_dense(
        _optimizer_bomb, kernel=__import__("numpy").zeros((4, 2), "float32"))),
    "h5 soft link": _weights(lambda tmp: h5_with_dense(_soft)),
    "h5 external link": _weights_file(lambda tmp: h5_with_dense(_external_link)),
    "h5 external dataset": _weights(lambda tmp: h5_with_dense(_external_dataset(tmp))),
    "h5 virtual dataset": _weights_file(lambda tmp: h5_with_dense(_virtual(tmp))),
    "h5 string dtype of the right shape": _weights(lambda tmp: h5_with_dense(
        kernel=__import__("numpy").full((4, 2), "abc", dtype="S3"))),
    "h5 not an h5 file": _weights(lambda tmp: b"\x89HDF\r\n\x1a\n" + bytes(100)),
}


def _deep_json(tmp, marker):
    path = tmp / "p.keras"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("config.json", "[" * 100000 + "]" * 100000)
    return path, {}


PAYLOADS["config.json nested 100000 deep"] = _deep_json


@pytest.fixture(scope="module", autouse=True)
def _warm():
    """One clean load first, so the lazy imports the loader does are done before the
    dangerous builtins (exec, import_module) are stubbed."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        model = hf.dense_model()
        model.compile("adam", "mse")
        model.save(os.path.join(d, "ok.keras"))
        fkeras.models.load_model(os.path.join(d, "ok.keras"))
        model.save_weights(os.path.join(d, "ok.weights.h5"))
        model.load_weights(os.path.join(d, "ok.weights.h5"))
        hf.write_keras(os.path.join(d, "lam.keras"),
                       hf.lambda_config(fe("keras.activations", "relu")))
        fkeras.models.load_model(os.path.join(d, "lam.keras"))


# What each kind of payload must be refused for (the first matching prefix wins).
REASONS = [
    ("lambda bytecode", r"is a Python lambda\. This carries a potential risk"),
    ("lambda builtin with foreign", r"registered_name='os\.system'` was provided"),
    ("lambda function as other dict", r"Invalid `function` for a Lambda layer"),
    ("lambda", r"Could not locate function '[^']+'"),
    ("TimeDistributed", r"Could not locate function 'system'"),
    ("model registered_name", r"registered_name='os>system'` was provided"),
    ("model", r"Unknown model class"),
    ("layer registered_name", r"registered_name='os\.system'` was provided"),
    ("layer", r"Unknown layer: '(system|load_model)'"),
    ("dense activation os.system", r"Could not locate function 'system'"),
    ("dense activation bytecode", r"Requested the deserialization of a Python lambda"),
    ("dense kernel_initializer function", r"Could not locate function 'system'"),
    ("dense activation", r"Could not interpret activation function identifier"),
    ("dense kernel_initializer", r"Could not interpret initializer identifier"),
    ("dense kernel_regularizer", r"Could not interpret regularizer identifier"),
    ("dense kernel_constraint", r"Could not interpret constraint identifier"),
    ("compile loss class", r"Unknown loss: 'system'"),
    ("compile loss dotted", r"Could not interpret loss identifier: os\.system"),
    ("compile lr", r"Unknown learning rate schedule: 'system'"),
    ("compile optimizer", r"Unknown optimizer: 'system'"),
    ("compile", r"Could not locate function 'system'"),
    ("config.json nested", r"config\.json is not valid JSON"),
    ("zip bomb", r"declares .* refusing to load a potential decompression bomb"),
    ("zip duplicated", r"appears twice"),
    ("zip with", r"declares 5001 members"),
    ("zip member symlink", r"is a symbolic link"),
    ("zip member", r"absolute or path-traversal name"),
    ("h5 bomb", r"saved weight has shape \(65536, 65536\)"),
    ("h5 soft link", r"Not allowed: H5 file with SoftLink"),
    ("h5 external link", r"Not allowed: H5 file with ExternalLink"),
    ("h5 external dataset", r"Not allowed: H5 file with external Dataset"),
    ("h5 virtual", r"Not allowed: H5 file with virtual Dataset"),
    ("h5 string", r"has dtype \|S3; expected a numeric dtype"),
    ("h5 not an h5", r"not a readable HDF5 file"),
]


def _reason(name):
    return next(pattern for prefix, pattern in REASONS if name.startswith(prefix))


def _stub(original, marker):
    """Creates the marker when called, except by Python's own import machinery (which runs
    `exec` on every module it imports lazily, e.g. an `encodings` codec)."""

    def stub(*args, **kwargs):
        if sys._getframe(1).f_code.co_filename.startswith("<frozen importlib"):
            return original(*args, **kwargs)
        marker.touch()

    return stub


@pytest.mark.filterwarnings("ignore:Duplicate name")
@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_payload_is_refused_and_never_runs(name, tmp_path, monkeypatch):
    marker = tmp_path / "marker"
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / f"{MODULE}.py").write_text(
        "import pathlib\n"
        f"pathlib.Path({str(marker)!r}).touch()\n"
        f"def touch(*args, **kwargs):\n    pathlib.Path({str(marker)!r}).touch()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, MODULE, raising=False)
    path, kwargs = PAYLOADS[name](work, marker)
    model = hf.dense_model() if str(path).endswith(".weights.h5") else None
    before = [w.numpy() for w in model.weights] if model is not None else None
    files = sorted(p.name for p in work.iterdir())

    with monkeypatch.context() as patch:
        for module, attr in PATCHED:
            patch.setattr(module, attr, _stub(getattr(module, attr), marker))
        with pytest.raises((ValueError, TypeError)) as info:
            if model is not None:
                model.load_weights(path)
            else:
                fkeras.models.load_model(path, **kwargs)
    assert not marker.exists(), f"payload {name!r} ran"
    assert re.search(_reason(name), str(info.value)), str(info.value)
    if os.environ.get("FKERAS_SHOW_REFUSALS"):
        print(f"\n{name}: {type(info.value).__name__}: {str(info.value)[:300]}")
    assert fkeras.config.in_safe_mode()
    if before is not None:  # all or nothing: no variable changed
        for old, w in zip(before, model.weights):
            assert (old == w.numpy()).all()
    assert sorted(p.name for p in work.iterdir()) == files  # nothing extracted
    assert not (tmp_path.parent / marker.name).exists()


def test_the_stubs_do_detect_a_call(tmp_path, monkeypatch):
    """The harness can fail: a loader that resolved os.system by import would be caught."""
    marker = tmp_path / "marker"
    monkeypatch.setattr(os, "system", lambda *a, **k: marker.touch())
    importlib.import_module("os").system("x")
    assert marker.exists()
    marker.unlink()
    fn = layers.Lambda.from_config(hf.lambda_config(bytecode(marker))["config"]["layers"][1]
                                   ["config"], safe_mode=False)
    fn(__import__("numpy").ones((1, 4), "float32"))
    assert marker.exists()


def test_pipepager_payload_would_run_a_shell_command(tmp_path):
    """The pydoc.pipepager payload is live: called directly it creates the marker."""
    import pydoc

    marker = tmp_path / "marker"
    pydoc.pipepager("text", cmd=f"touch {marker}")
    assert marker.exists()


def test_payload_names_are_distinct_and_counted():
    names = sorted(PAYLOADS)
    assert len(set(names)) == len(names) >= 60
    assert all(_reason(name) for name in names)
