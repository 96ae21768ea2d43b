"""Whole models exported to ONNX and run by onnxruntime: the digits CNN of examples/ (trained
briefly on the bundled digits), an LSTM text classifier, the Functional API guide's
multi-input / multi-output models, nested and Sequential models."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import fkeras  # noqa: E402
from fkeras import layers as L  # noqa: E402
from fkeras import ops  # noqa: E402
from onnx_cases import randomize  # noqa: E402
from test_onnx_layers import check_model, run_onnx  # noqa: E402


def test_digits_example_trained(tmp_path):
    from fkeras.examples.digits import build_model, compile_model, load_digits

    (x_train, y_train), (x_test, _) = load_digits()
    model = compile_model(build_model())
    model.fit(x_train[:256], y_train[:256], epochs=1, batch_size=32, verbose=0)
    path = tmp_path / "digits.onnx"
    model.export(path, verbose=False)
    for batch in (1, 37):
        x = x_test[:batch]
        got = run_onnx(path, model, [x])[0]
        expected = model.predict(x, verbose=0)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(got.argmax(-1), expected.argmax(-1))


def test_cnn_with_batch_norm_channels_first(tmp_path):
    x = fkeras.Input((3, 12, 12), name="image")
    y = L.Conv2D(8, 3, padding="same", use_bias=False, data_format="channels_first")(x)
    y = L.BatchNormalization(axis=1)(y)
    y = L.ReLU()(y)
    y = L.MaxPooling2D(2, data_format="channels_first")(y)
    y = L.SeparableConv2D(8, 3, data_format="channels_first", activation="relu")(y)
    y = L.GlobalAveragePooling2D(data_format="channels_first")(y)
    y = L.Dense(5, activation="softmax")(y)
    model = fkeras.Model(x, y)
    randomize(model, np.random.default_rng(0))
    check_model(model, tmp_path)


def test_lstm_text_classifier_trained(tmp_path):
    rng = np.random.default_rng(0)
    tokens = fkeras.Input((12,), dtype="int32", name="tokens")
    y = L.Embedding(50, 8)(tokens)
    y = L.LSTM(16, return_sequences=True)(y)
    y = L.Bidirectional(L.GRU(8))(y)
    y = L.Dropout(0.2)(y)
    y = L.Dense(3, activation="softmax")(y)
    model = fkeras.Model(tokens, y)
    model.compile("adam", "sparse_categorical_crossentropy")
    x = rng.integers(0, 50, (64, 12)).astype("int32")
    model.fit(x, rng.integers(0, 3, 64), epochs=1, batch_size=16, verbose=0)
    check_model(model, tmp_path, spec=("int", 50))


def test_guide_multi_input_multi_output(tmp_path):
    # The Functional API guide's ticket classifier: title and body text, tags -> priority and
    # department (shared-vocabulary embeddings, LSTMs, concatenation, two heads).
    title = fkeras.Input((10,), name="title")
    body = fkeras.Input((20,), name="body")
    tags = fkeras.Input((12,), name="tags")
    title_features = L.LSTM(16)(L.Embedding(100, 8)(title))
    body_features = L.LSTM(8)(L.Embedding(100, 8)(body))
    x = L.concatenate([title_features, body_features, tags])
    priority = L.Dense(1, name="priority")(x)
    department = L.Dense(4, name="department")(x)
    model = fkeras.Model([title, body, tags], [priority, department])
    randomize(model, np.random.default_rng(0))
    path = tmp_path / "tickets.onnx"
    model.export(path, verbose=False)
    proto = onnx.load(str(path))
    assert [i.name for i in proto.graph.input] == ["title", "body", "tags"]
    assert [o.name for o in proto.graph.output] == ["priority", "department"]
    rng = np.random.default_rng(1)
    for batch in (2, 9):
        arrays = [rng.integers(0, 100, (batch, 10)).astype("float32"),
                  rng.integers(0, 100, (batch, 20)).astype("float32"),
                  rng.integers(0, 2, (batch, 12)).astype("float32")]
        got = run_onnx(path, model, arrays)
        for g, e in zip(got, model.predict(arrays, verbose=0)):
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


def test_guide_shared_layer_two_towers(tmp_path):
    a, b = fkeras.Input((16,), name="left"), fkeras.Input((16,), name="right")
    shared = L.Dense(8, activation="relu", name="shared")
    merged = ops.concatenate([shared(a), shared(b)], axis=-1)
    out_main = L.Dense(1, activation="sigmoid", name="main_output")(merged)
    out_aux = L.Dense(3, activation="softmax", name="aux_output")(merged)
    model = fkeras.Model([a, b], [out_main, out_aux])
    randomize(model, np.random.default_rng(0))
    check_model(model, tmp_path)
    # The shared layer's weights are stored once.
    proto = onnx.load(str(tmp_path / "model.onnx"))
    assert sum(i.name.startswith("shared/kernel") for i in proto.graph.initializer) == 1


def test_sequential_with_input_shape(tmp_path):
    model = fkeras.Sequential([L.Dense(32, activation="relu", input_shape=(20,)),
                               L.Dense(10, activation="softmax")])
    randomize(model, np.random.default_rng(0))
    check_model(model, tmp_path)


def test_sequential_built_by_predict(tmp_path):
    model = fkeras.Sequential([L.Conv1D(4, 3, activation="relu"), L.GlobalMaxPooling1D(),
                               L.Dense(2)])
    model.predict(np.zeros((1, 8, 3), np.float32), verbose=0)
    randomize(model, np.random.default_rng(0))
    check_model(model, tmp_path)


def test_model_output_is_an_input_and_repeated(tmp_path):
    x = fkeras.Input((3,), name="x")
    y = L.Dense(2, name="d")(x)
    model = fkeras.Model(x, [y, x, y])
    check_model(model, tmp_path)


class ScaledDense(L.Dense):
    """A subclass that keeps Dense's call exports as Dense."""

    def __init__(self, units, **kwargs):
        super().__init__(units, activation="relu", **kwargs)


def test_subclass_keeping_call_exports_as_base(tmp_path):
    x = fkeras.Input((5,), name="x")
    model = fkeras.Model(x, ScaledDense(3)(x))
    randomize(model, np.random.default_rng(0))
    check_model(model, tmp_path)


def test_dict_inputs_fed_by_name(tmp_path):
    a, b = fkeras.Input((3,), name="a"), fkeras.Input((2,), name="b")
    y = L.Dense(2)(L.Concatenate()([a, b]))
    model = fkeras.Model({"a": a, "b": b}, y)
    randomize(model, np.random.default_rng(0))
    path = tmp_path / "m.onnx"
    model.export(path, verbose=False)
    import onnxruntime as ort

    session = ort.InferenceSession(str(path))
    rng = np.random.default_rng(1)
    feeds = {"a": rng.normal(size=(4, 3)).astype("float32"),
             "b": rng.normal(size=(4, 2)).astype("float32")}
    np.testing.assert_allclose(session.run(None, feeds)[0], model.predict(feeds, verbose=0),
                               rtol=1e-5, atol=1e-5)
