"""Hostile legacy `.h5` files through `model.load_weights` and `load_model`: links out of the
file, virtual/external storage, non-numeric data and datasets that declare far more than the
model holds are refused before any data is read; nothing is assigned."""

import json
import time

import numpy as np
import pytest

import fkeras

h5py = pytest.importorskip("h5py")


def _model():
    model = fkeras.Sequential([fkeras.Input((3,)), fkeras.layers.Dense(2, name="dense")])
    return model


def _write(path, kernel_writer, whole_model=False):
    """A legacy weights file for _model(); `kernel_writer(group, name)` stores the kernel."""
    with h5py.File(path, "w") as f:
        root = f
        if whole_model:
            f.attrs["model_config"] = json.dumps(
                {"class_name": "Sequential", "config": _model().get_config()})
            root = f.create_group("model_weights")
        root.attrs["layer_names"] = [b"dense"]
        g = root.create_group("dense")
        g.attrs["weight_names"] = [b"dense/kernel:0", b"dense/bias:0"]
        inner = g.create_group("dense")
        kernel_writer(inner, "kernel:0", path)
        inner.create_dataset("bias:0", data=np.ones(2, "float32"))


def _external_link(group, name, path):
    other = str(path) + ".other.h5"
    with h5py.File(other, "w") as o:
        o.create_dataset("secret", data=np.full((3, 2), 7.0, "float32"))
    group[name] = h5py.ExternalLink(other, "/secret")


def _soft_link(group, name, path):
    group.create_dataset("elsewhere", data=np.zeros((3, 2), "float32"))
    group[name] = h5py.SoftLink(group.name + "/elsewhere")


def _strings(group, name, path):
    group.create_dataset(name, data=np.array([[b"a", b"b"]] * 3))


def _bomb(group, name, path):  # declares 16 GiB, stores none of it
    group.create_dataset(name, shape=(65536, 65536), dtype="float32", chunks=(1024, 1024),
                         compression="gzip", fillvalue=1.0)


def _external_storage(group, name, path):
    raw = str(path) + ".raw"
    np.full((3, 2), 5.0, "float32").tofile(raw)
    group.create_dataset(name, shape=(3, 2), dtype="float32", external=[(raw, 0, 24)])


def _virtual(group, name, path):
    other = str(path) + ".src.h5"
    with h5py.File(other, "w") as o:
        o.create_dataset("data", data=np.full((3, 2), 9.0, "float32"))
    layout = h5py.VirtualLayout(shape=(3, 2), dtype="float32")
    layout[:] = h5py.VirtualSource(other, "data", shape=(3, 2))
    group.create_virtual_dataset(name, layout)


PAYLOADS = {
    "external_link": (_external_link, "ExternalLink"),
    "soft_link": (_soft_link, "SoftLink"),
    "strings": (_strings, "not numbers"),
    "declared_16GiB": (_bomb, "Shape mismatch"),
    "external_storage": (_external_storage, "external Dataset"),
    "virtual": (_virtual, "virtual Dataset"),
}


@pytest.mark.parametrize("name", sorted(PAYLOADS))
@pytest.mark.parametrize("by_name", [False, True])
def test_load_weights_refuses(name, by_name, tmp_path):
    writer, reason = PAYLOADS[name]
    path = tmp_path / "w.h5"
    _write(path, writer)
    model = _model()
    before = [w.numpy().copy() for w in model.weights]
    start = time.perf_counter()
    with pytest.raises(ValueError, match=reason):
        model.load_weights(str(path), by_name=by_name) if by_name else \
            model.load_weights(str(path))
    assert time.perf_counter() - start < 5  # nothing large was read
    for old, w in zip(before, model.weights):
        np.testing.assert_array_equal(old, w.numpy())


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_load_model_refuses(name, tmp_path):
    writer, reason = PAYLOADS[name]
    path = tmp_path / "m.h5"
    _write(path, writer, whole_model=True)
    with pytest.raises(ValueError, match=reason):
        fkeras.models.load_model(str(path))


def test_a_clean_file_still_loads(tmp_path):
    path = tmp_path / "ok.h5"
    _write(path, lambda g, n, p: g.create_dataset(n, data=np.full((3, 2), 2.0, "float32")))
    model = _model()
    model.load_weights(str(path))
    np.testing.assert_array_equal(model.layers[0].kernel.numpy(), 2.0)
    np.testing.assert_array_equal(model.layers[0].bias.numpy(), 1.0)
