"""The whole catalogue: every class in fkeras.layers.LAYER_CLASSES survives a JSON config round
trip when built from minimal arguments, and every Keras layer name docs/layers.md claims exists
in fkeras.layers (the Keras part is skipped without keras)."""

import importlib.util
import json
import os
import pathlib
import re

import pytest

import fkeras
from fkeras import layers


@fkeras.saving.register_keras_serializable(package="test_catalogue")
def identity(x):
    return x


def _op_layer():
    from fkeras.ops.registry import REGISTRY

    return layers.OpLayer(REGISTRY["add"], {})


# Minimal constructor arguments per class, from Keras's signatures. Rows for classes that are
# not in the catalogue yet are ignored; a class that needs arguments and has no row fails the
# test (add its row here). A callable builds the layer itself (wrappers need fresh sub-layers).
MINIMAL = {
    "Dense": {"units": 2}, "EinsumDense": {"equation": "ab,bc->ac", "output_shape": 2},
    "Embedding": {"input_dim": 5, "output_dim": 2}, "Activation": {"activation": "relu"},
    "Lambda": {"function": identity}, "InputLayer": {"shape": (3,)}, "OpLayer": _op_layer,
    "Reshape": {"target_shape": (2, -1)}, "Permute": {"dims": (2, 1)}, "RepeatVector": {"n": 2},
    "Dot": {"axes": 1},
    "Dropout": {"rate": 0.5}, "SpatialDropout1D": {"rate": 0.5},
    "SpatialDropout2D": {"rate": 0.5}, "SpatialDropout3D": {"rate": 0.5},
    "GaussianNoise": {"stddev": 0.1}, "GaussianDropout": {"rate": 0.5},
    "AlphaDropout": {"rate": 0.5},
    "LSTM": {"units": 2}, "GRU": {"units": 2}, "SimpleRNN": {"units": 2},
    "LSTMCell": {"units": 2}, "GRUCell": {"units": 2}, "SimpleRNNCell": {"units": 2},
    "ConvLSTM1D": {"filters": 2, "kernel_size": 3}, "ConvLSTM2D": {"filters": 2, "kernel_size": 3},
    "RNN": lambda: layers.RNN(layers.LSTMCell(2)),
    "Bidirectional": lambda: layers.Bidirectional(layers.LSTM(2)),
    "TimeDistributed": lambda: layers.TimeDistributed(layers.Dense(2)),
    "DepthwiseConv1D": {"kernel_size": 3}, "DepthwiseConv2D": {"kernel_size": 3},
    "CategoryEncoding": {"num_tokens": 3}, "Hashing": {"num_bins": 3},
    "Resizing": {"height": 2, "width": 2}, "CenterCrop": {"height": 2, "width": 2},
    "RandomCrop": {"height": 2, "width": 2}, "RandomRotation": {"factor": 0.1},
    "RandomZoom": {"height_factor": 0.1}, "RandomTranslation": {"height_factor": 0.1,
                                                                 "width_factor": 0.1},
    "MultiHeadAttention": {"num_heads": 2, "key_dim": 2},
    "GroupQueryAttention": {"head_dim": 2, "num_query_heads": 2, "num_key_value_heads": 1},
    "GroupedQueryAttention": {"head_dim": 2, "num_query_heads": 2, "num_key_value_heads": 1},
    "StackedRNNCells": lambda: layers.StackedRNNCells([layers.LSTMCell(2), layers.GRUCell(3)]),
}
for _name in ("Conv1D", "Conv2D", "Conv3D", "Convolution1D", "Convolution2D", "Convolution3D",
              "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose",
              "Convolution2DTranspose", "SeparableConv1D", "SeparableConv2D",
              "SeparableConvolution1D", "SeparableConvolution2D"):
    MINIMAL[_name] = {"filters": 2, "kernel_size": 3}
# Numeric preprocessing layers.
MINIMAL.update({"Rescaling": {"scale": 0.5}, "HashedCrossing": {"num_bins": 3},
                "Discretization": {"num_bins": 3}})


def _make(name, cls):
    spec = MINIMAL.get(name, MINIMAL.get(cls.__name__, {}))
    if callable(spec):
        return spec()
    try:
        return cls(**spec)
    except TypeError as e:
        pytest.fail(f"{name} cannot be built from {spec}: {e}. Add its row to MINIMAL in "
                    "tests/layers/test_catalogue.py.")


def _dump(config):
    return json.dumps(config, sort_keys=True)


@pytest.mark.parametrize("name", sorted(layers.LAYER_CLASSES))
def test_config_round_trips_through_json(name):
    cls = layers.LAYER_CLASSES[name]
    layer = _make(name, cls)
    config = layer.get_config()
    text = _dump(config)  # JSON-serializable
    entry = json.loads(json.dumps(layers.serialize_layer(layer)))
    revived = layers.deserialize_layer(entry)
    assert type(revived) is cls
    assert _dump(revived.get_config()) == text, f"{name}: the config changed in the round trip"


# ---- docs/layers.md against the catalogue ----

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "layers.md"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def claimed_names():
    """Names in the first cell of each table row of docs/layers.md (backticked names when the
    cell has any, else its identifiers)."""
    names = set()
    for line in DOCS.read_text().splitlines():
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        cell = line.split("|")[1].strip()
        if cell.lower() in ("layer", "layers"):
            continue
        ticked = re.findall(r"`([^`]+)`", cell)
        for part in ticked or [cell]:
            names.update(_expand(part))
    return names


def _expand(part):
    """Identifiers of a cell part; `SpatialDropout1D/2D/3D` means the three names."""
    out = []
    for piece in part.split("/"):
        piece = piece.strip()
        if re.fullmatch(r"\d+D", piece) and out:
            out.append(re.sub(r"\d+D$", piece, out[-1]))
        else:
            out.extend(n for n in _IDENT.findall(piece) if n[0].isupper())
    return out


def test_docs_claim_only_existing_layers():
    names = claimed_names()
    assert names, "docs/layers.md lists no layers"
    missing = sorted(n for n in names if not hasattr(layers, n))
    assert not missing, f"docs/layers.md claims layers fkeras.layers lacks: {missing}"


def test_claimed_keras_layer_names_exist():
    if "KERAS_BACKEND" not in os.environ and importlib.util.find_spec("torch") is not None:
        os.environ["KERAS_BACKEND"] = "torch"
    keras = pytest.importorskip("keras")
    public = {n for n in dir(keras.layers) if isinstance(getattr(keras.layers, n), type)}
    claimed = claimed_names() & public
    assert claimed, "docs/layers.md claims no Keras layer"
    missing = sorted(n for n in claimed if not isinstance(getattr(layers, n, None), type))
    assert not missing, f"Keras layers claimed in docs/layers.md but absent: {missing}"
    # Every class fkeras exports under a Keras name is a layer of the catalogue.
    for n in claimed:
        assert n in layers.LAYER_CLASSES or getattr(layers, n) in \
            layers.LAYER_CLASSES.values(), n
    assert fkeras.layers is layers


def test_constructor_signatures_follow_keras():
    """Every argument of Keras 3's constructor exists in fkeras's, in the same relative order
    for the explicit ones (so positional calls bind alike); the base Layer's keyword
    arguments (`weights`, `activity_regularizer`, ...) may come through **kwargs."""
    import inspect

    keras = pytest.importorskip("keras")
    from fkeras.layers.layer import _BASE_KWARGS

    problems = []
    for name, cls in sorted(layers.LAYER_CLASSES.items()):
        k_cls = getattr(keras.layers, name, None)
        if k_cls is None or name == "Layer":
            continue
        k_params = [p for p in inspect.signature(k_cls.__init__).parameters
                    if p not in ("self", "kwargs")]
        f_params = [p for p in inspect.signature(cls.__init__).parameters
                    if p not in ("self", "kwargs")]
        missing = [p for p in k_params if p not in f_params and p not in _BASE_KWARGS]
        shared = [p for p in k_params if p in f_params]
        if missing:
            problems.append(f"{name}: missing {missing}")
        if shared != [p for p in f_params if p in shared]:
            problems.append(f"{name}: order {shared} vs {f_params}")
    assert not problems, "\n".join(problems)
