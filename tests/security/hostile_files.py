"""Builders for hostile `.keras` / `.weights.h5` files (the payloads of tests/security).

Every payload is harmless: if a loader ran it, it would only create a marker file.
"""

import json
import zipfile
import zlib

import fkeras

WEIGHTS = "model.weights.h5"


def dense_model():
    """A tiny model (Dense 4 -> 2: 40 bytes of weights) to carry the payloads."""
    inp = fkeras.Input((4,), name="x")
    return fkeras.Model(inp, fkeras.layers.Dense(2, name="d")(inp))


def base_config():
    """config.json of dense_model(), as fkeras writes it."""
    from fkeras.saving import saving_lib

    return saving_lib.model_config(dense_model())


def lambda_config(function, arguments=None, **extra):
    """A model config whose middle layer is a Lambda with the given serialized function."""
    config = base_config()
    layers = config["config"]["layers"]
    lam = {"module": "keras.layers", "class_name": "Lambda", "registered_name": None,
           "name": "payload",
           "config": {"name": "payload", "trainable": True, "dtype": "float32",
                      "function": function, "arguments": arguments or {}, **extra},
           "inbound_nodes": [[["x", 0, 0, {}]]]}
    dense = layers[-1]
    dense["inbound_nodes"] = [[["payload", 0, 0, {}]]]
    layers.insert(1, lam)
    return config


def function_entry(module, name, registered_name=None):
    return {"module": module, "class_name": "function", "config": name,
            "registered_name": registered_name}


def write_keras(path, config, members=(), weights=None):
    """A `.keras` zip with this config.json (plus extra (name, bytes) members)."""
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("metadata.json", json.dumps({"keras_version": "3.15.1"}))
        zf.writestr("config.json", json.dumps(config))
        if weights is not None:
            zf.writestr(WEIGHTS, weights)
        for name, data in members:
            zf.writestr(name, data)
    return path


def deflate_zeros(n_chunks, chunk=2**24):
    """A raw deflate stream inflating to n_chunks * chunk zero bytes, built without
    compressing them all (a full flush makes every chunk's output identical)."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = c.compress(bytes(chunk)) + c.flush(zlib.Z_FULL_FLUSH)
    return block * n_chunks + c.flush()


def write_zip_bomb(path, config, member, inflated_chunks, declared):
    """A `.keras` zip whose `member` is a real deflate bomb (inflated_chunks x 16 MiB of
    zeros) declaring `declared` bytes in the central directory."""
    stream = deflate_zeros(inflated_chunks)
    with zipfile.ZipFile(path, "w") as zf:
        if member != "metadata.json":
            zf.writestr("metadata.json", json.dumps({"keras_version": "3.15.1"}))
        if member != "config.json":
            zf.writestr("config.json", json.dumps(config))
        info = zipfile.ZipInfo(member)
        zf.writestr(info, stream)
        # The central directory is written on close: declare the inflated size there.
        info = zf.getinfo(member)
        info.compress_type = zipfile.ZIP_DEFLATED
        info.file_size = declared
    return path


def h5_bomb_bytes(shape=(65536, 65536)):
    """Weights h5 bytes for dense_model() whose kernel dataset declares 4 * prod(shape)
    bytes (16 GiB by default) but stores none of them (chunked, compressed, a fill value);
    the bias is a normal dataset."""
    import io

    import h5py
    import numpy as np

    buffer = io.BytesIO()
    with h5py.File(buffer, "w") as f:
        f.create_group("vars")
        group = f.create_group("layers/dense/vars")
        group.attrs["name"] = "d"
        group.create_dataset("0", shape=shape, dtype="float32", chunks=(1024, 1024),
                             compression="gzip", fillvalue=1.0)
        group.create_dataset("1", data=np.zeros(2, "float32"))
    return buffer.getvalue()
