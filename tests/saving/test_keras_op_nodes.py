"""Raw operations in functional graphs (`x + y`, `ops.mean(x, axis=1)`, `x[:, 0]`) in `.keras`
files: fkeras reads Keras 3's operation nodes, writes its own op nodes as Keras does, and
refuses operation names it does not have."""

import json
import zipfile

import numpy as np
import pytest

import fkeras
from fkeras import ops

rng = np.random.default_rng(0)
X = [rng.standard_normal((2, 4, 3)).astype("float32"), rng.standard_normal((2, 4, 3)).astype("float32")]


def _fkeras_model():
    a, b = fkeras.Input((4, 3)), fkeras.Input((4, 3))
    outs = [a + b, a - 1.0, a * b, a / 2.0, a ** 2, -a, a @ ops.transpose(b, (0, 2, 1)),
            ops.exp(a), ops.sqrt(ops.abs(a)), ops.tanh(a), ops.sigmoid(a), ops.relu(a),
            ops.gelu(a), ops.gelu(a, approximate=False), ops.silu(a), ops.leaky_relu(a, 0.1),
            ops.elu(a), ops.softmax(a, axis=-1), ops.concatenate([a, b], axis=1),
            ops.reshape(a, (-1, 12)), ops.squeeze(ops.expand_dims(a, 1), 1),
            ops.mean(a, axis=1), ops.sum(a, axis=[1, 2], keepdims=True), ops.max(a, axis=1),
            ops.cast(a, "float16"), ops.not_equal(a, 0.0), ops.where(a > 0, a, 0.0), a[:, 0],
            a[:, 1:3, ::2], ops.stack([a, b], axis=1), ops.maximum(a, 0.5), ops.clip(a, 0, 1)]
    return fkeras.Model([a, b], outs)


def _max_diff(p, q):
    return max(float(np.abs(np.asarray(u, float) - np.asarray(v, float)).max())
               for u, v in zip(p, q))


def test_fkeras_op_nodes_are_written_as_keras_operations(tmp_path):
    model = _fkeras_model()
    ref = model.predict(X, verbose=0)
    model.save(tmp_path / "m.keras")
    config = json.loads(zipfile.ZipFile(tmp_path / "m.keras").read("config.json"))
    entries = config["config"]["layers"][2:]
    assert all(e["module"].startswith("keras.src.ops.") for e in entries)
    assert {"Add", "Relu", "GetItem", "Concatenate", "Mean", "Cast", "Where"} <= \
        {e["class_name"] for e in entries}
    again = fkeras.models.load_model(tmp_path / "m.keras")
    assert _max_diff(again.predict(X, verbose=0), ref) == 0.0


def test_an_op_keras_lacks_stays_an_fkeras_node(tmp_path):
    inp = fkeras.Input((3,))
    out = fkeras.layers.OpLayer(fkeras.ops.REGISTRY["activation"], {"code": 0, "alpha": 0.0})
    model = fkeras.Model(inp, ops.multiply(inp, 3.0))
    entry = fkeras.layers.serialize_layer(out)
    assert entry["class_name"] == "OpLayer"
    model.save(tmp_path / "m.keras")
    again = fkeras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(again.predict(X[0][:, 0], verbose=0), 3 * X[0][:, 0])


def test_keras_files_with_operations_load_and_go_back(tmp_path):
    keras = pytest.importorskip("keras")
    pytest.importorskip("torch")
    a, b = keras.Input((4, 3)), keras.Input((4, 3))
    x = keras.ops.relu(a + b) * 2.0
    y = keras.ops.concatenate([x[:, 1:, :], keras.ops.tanh(b)[:, :3]], axis=-1)
    z = keras.ops.mean(y, axis=1)
    w = keras.ops.not_equal(keras.ops.cast(z > 0, "float32"), 0.0)
    kmodel = keras.Model([a, b], [y, z, w])
    kmodel.save(tmp_path / "k.keras")
    ref = kmodel.predict(X, verbose=0)
    model = fkeras.models.load_model(tmp_path / "k.keras")
    assert _max_diff(model.predict(X, verbose=0), ref) < 1e-6
    model.save(tmp_path / "f.keras")
    back = keras.models.load_model(tmp_path / "f.keras")
    assert _max_diff(back.predict(X, verbose=0), ref) < 1e-6


def test_fkeras_files_with_operations_load_in_keras(tmp_path):
    keras = pytest.importorskip("keras")
    pytest.importorskip("torch")
    model = _fkeras_model()
    model.save(tmp_path / "m.keras")
    kmodel = keras.models.load_model(tmp_path / "m.keras")
    assert _max_diff(kmodel.predict(X, verbose=0), model.predict(X, verbose=0)) < 1e-6


def test_a_loaded_operation_graph_trains(tmp_path):
    inp = fkeras.Input((3,))
    h = fkeras.layers.Dense(4)(inp)
    out = fkeras.layers.Dense(1)(ops.relu(h) * 2.0 + 1.0)
    fkeras.Model(inp, out).save(tmp_path / "m.keras")
    model = fkeras.models.load_model(tmp_path / "m.keras")
    x = rng.standard_normal((64, 3)).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    model.compile("adam", "mse")
    before = model.get_weights()
    losses = model.fit(x, y, epochs=5, verbose=0).history["loss"]
    assert losses[-1] < losses[0]
    assert all((b != a).any() for b, a in zip(before, model.get_weights()))


@pytest.mark.parametrize("class_name,module", [("System", "keras.src.ops.numpy"),
                                               ("__import__", "keras.src.ops.numpy"),
                                               ("Eval", "keras.src.ops.core")])
def test_unknown_operations_are_refused(class_name, module):
    entry = {"module": module, "class_name": class_name, "config": {"name": "x"},
             "registered_name": class_name}
    with pytest.raises(ValueError, match="Unknown Keras operation|no function"):
        fkeras.layers.deserialize_layer(entry)
