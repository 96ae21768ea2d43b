"""Model.export's errors and file handling: formats, subclassed models, layers with no
conversion (named), arguments, atomic writes, and the lazy import of onnx."""

import os
import subprocess
import sys

import numpy as np
import pytest

import fkeras
from fkeras import layers as L


def _dense_model():
    x = fkeras.Input((4,), name="x")
    return fkeras.Model(x, L.Dense(2, name="out")(x))


# ---- no onnx needed ----
@pytest.mark.parametrize("fmt", ["tf_saved_model", "openvino", "litert", "torch"])
def test_keras_only_formats_name_the_format(fmt, tmp_path):
    with pytest.raises(ValueError, match=rf"format='{fmt}'.*not supported by fkeras.*"
                                         r"format='onnx'"):
        _dense_model().export(tmp_path / "m", format=fmt)
    assert not os.path.exists(tmp_path / "m")


def test_unknown_format(tmp_path):
    with pytest.raises(ValueError, match=r"Unrecognized format='keras'.*\['onnx'\]"):
        _dense_model().export(tmp_path / "m", format="keras")


def test_import_fkeras_does_not_import_onnx():
    code = ("import sys, fkeras; m = fkeras.Model; import fkeras.export; "
            "assert 'onnx' not in sys.modules and 'onnxruntime' not in sys.modules, "
            "[k for k in sys.modules if 'onnx' in k]")
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ))


def test_missing_onnx_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ImportError, match=r'pip install "fkeras\[onnx\]"'):
        _dense_model().export(tmp_path / "m.onnx")


# ---- with onnx ----
def _onnx():
    return pytest.importorskip("onnx")


class Subclassed(fkeras.Model):
    def __init__(self):
        super().__init__()
        self.dense = L.Dense(2)

    def call(self, x):
        return self.dense(x)


def test_subclassed_model_is_refused(tmp_path):
    _onnx()
    model = Subclassed()
    model.predict(np.zeros((1, 3), np.float32), verbose=0)
    with pytest.raises(ValueError, match=r'model "subclassed".*only Functional and Sequential '
                                         r"models"):
        model.export(tmp_path / "m.onnx")


def test_unbuilt_sequential_is_refused(tmp_path):
    _onnx()
    with pytest.raises(ValueError, match="has not yet been built"):
        fkeras.Sequential([L.Dense(2)]).export(tmp_path / "m.onnx")


class MyLayer(L.Layer):
    def call(self, x):
        return x * 2.0


class MyCell(L.Layer):
    state_size = 2
    output_size = 2

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], 2))
        self.built = True

    def call(self, inputs, states):
        out = fkeras.ops.matmul(inputs, self.w) + states[0]
        return out, [out]


def _unsupported_models():
    x = fkeras.Input((6, 3), name="x")
    tokens = fkeras.Input((6,), name="tokens")
    return [
        (fkeras.Model(x, L.Lambda(lambda t: t + 1.0, name="plus_one")(x)),
         r'layer "plus_one" \(of class Lambda\).*has no ONNX conversion'),
        (fkeras.Model(x, MyLayer(name="mine")(x)),
         r'layer "mine" \(of class MyLayer\).*has no ONNX conversion'),
        (fkeras.Model(x, L.Activation("sparsemax", name="sm")(x)),
         r'layer "sm" \(of class Activation\).*activation "sparsemax"'),
        (fkeras.Model(x, L.Dense(2, activation=lambda t: t * 3.0, name="user_act")(x)),
         r'layer "user_act" \(of class Dense\).*activation'),
        (fkeras.Model(tokens, L.LSTM(2, name="masked_lstm")(
            L.Embedding(9, 3, mask_zero=True)(tokens))),
         r'layer "masked_lstm" \(of class LSTM\).*Keras mask'),
        (fkeras.Model(x, L.RNN(L.StackedRNNCells([L.GRUCell(2), MyCell()]),
                               name="stacked")(x)),
         r'layer "stacked" \(of class RNN\).*cell MyCell is not a built-in'),
        (fkeras.Model(x, L.UpSampling1D(2, name="up")(L.Masking(name="msk")(x))),
         None),  # Masking exports (zeros), UpSampling1D does not read masks
    ]


@pytest.mark.parametrize("index", range(7))
def test_unsupported_layer_is_named(index, tmp_path):
    _onnx()
    model, pattern = _unsupported_models()[index]
    path = tmp_path / "m.onnx"
    if pattern is None:
        model.export(path, verbose=False)
        assert path.exists()
        return
    with pytest.raises(ValueError, match=r"Cannot export " + pattern):
        model.export(path)
    assert not path.exists()


def test_stateful_rnn_is_refused(tmp_path):
    _onnx()
    x = fkeras.Input(batch_shape=(2, 5, 3), name="x")
    model = fkeras.Model(x, L.GRU(2, stateful=True, name="st")(x))
    with pytest.raises(ValueError, match=r'layer "st" \(of class GRU\).*stateful=True'):
        model.export(tmp_path / "m.onnx")


def test_unknown_keyword_and_opset(tmp_path):
    onnx = _onnx()
    model = _dense_model()
    with pytest.raises(ValueError, match=r"Unrecognized argument\(s\).*\['jax2tf_kwargs'\]"):
        model.export(tmp_path / "m.onnx", jax2tf_kwargs={})
    with pytest.raises(ValueError, match=r"`opset_version` must be an integer from 18"):
        model.export(tmp_path / "m.onnx", opset_version=11)
    model.export(tmp_path / "m.onnx", opset_version=20, verbose=False)
    assert onnx.load(str(tmp_path / "m.onnx")).opset_import[0].version == 20


def test_input_signature(tmp_path):
    onnx = _onnx()
    model = _dense_model()
    model.export(tmp_path / "m.onnx", input_signature=[fkeras.InputSpec(shape=(3, 4))],
                 verbose=False)
    dim = onnx.load(str(tmp_path / "m.onnx")).graph.input[0].type.tensor_type.shape.dim
    assert [d.dim_value for d in dim] == [3, 4]
    with pytest.raises(ValueError, match=r"`input_signature` entry 0 has shape \(None, 5\)"):
        model.export(tmp_path / "m.onnx", input_signature=[(None, 5)])


def test_verbose_message(tmp_path, capsys):
    _onnx()
    path = tmp_path / "m.onnx"
    _dense_model().export(path)
    assert capsys.readouterr().out == f"Saved artifact at '{path}'.\n"
    _dense_model().export(path, verbose=False)
    assert capsys.readouterr().out == ""


def test_written_atomically(tmp_path, monkeypatch):
    _onnx()
    path = tmp_path / "m.onnx"
    path.write_bytes(b"previous")
    renames = []
    real_replace = os.replace

    def recording_replace(src, dst):
        renames.append((src, dst))
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", recording_replace)
    _dense_model().export(path, verbose=False)
    (src, dst), = renames
    assert os.path.dirname(src) == str(tmp_path) and os.fspath(dst) == str(path)
    assert os.path.basename(src).startswith(".m.onnx.tmp")
    assert path.read_bytes() != b"previous"

    # A failure before the rename leaves the previous file and no temporary file.
    path.write_bytes(b"previous")

    def failing_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        _dense_model().export(path, verbose=False)
    assert path.read_bytes() == b"previous"
    assert sorted(os.listdir(tmp_path)) == ["m.onnx"]


def test_failed_conversion_leaves_existing_file(tmp_path):
    _onnx()
    path = tmp_path / "m.onnx"
    path.write_bytes(b"previous")
    x = fkeras.Input((3,), name="x")
    with pytest.raises(ValueError, match="plus"):
        fkeras.Model(x, L.Lambda(lambda t: t + 1.0, name="plus")(x)).export(path)
    assert path.read_bytes() == b"previous"
