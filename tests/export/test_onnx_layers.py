"""Every exportable layer: onnxruntime's output equals model.predict within 1e-5 at two batch
sizes (the batch dimension of the exported graph is dynamic)."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import fkeras  # noqa: E402
from fkeras import layers as L  # noqa: E402
from fkeras.utils import nest  # noqa: E402
from onnx_cases import C, draw_inputs, randomize  # noqa: E402


def run_onnx(path, model, arrays):
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feeds = {i.name: a for i, a in zip(session.get_inputs(), arrays)}
    assert [i.name for i in session.get_inputs()] == \
        [t._keras_history.layer.name for t in model.inputs]
    return session.run(None, feeds)


def check_model(model, tmp_path, spec=None, batches=(2, 5), seed=0, rtol=1e-5, atol=1e-5):
    rng = np.random.default_rng(seed)
    path = tmp_path / "model.onnx"
    model.export(path, format="onnx", verbose=False)
    onnx.checker.check_model(onnx.load(str(path)), full_check=True)
    graph_input = onnx.load(str(path)).graph.input[0]
    assert graph_input.type.tensor_type.shape.dim[0].dim_param == "batch"
    for batch in batches:
        arrays = draw_inputs(model, spec, batch, rng)
        expected = model.predict(arrays if len(arrays) > 1 else arrays[0], verbose=0)
        expected = nest.flatten(expected)  # nested outputs: stacked cells' states
        got = run_onnx(path, model, arrays)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert g.shape == np.shape(e)
            np.testing.assert_allclose(g, np.asarray(e), rtol=rtol, atol=atol)


@pytest.mark.filterwarnings("ignore:You passed `rms_scaling=True`")
@pytest.mark.parametrize("name", sorted(C))
def test_layer_matches_predict(name, tmp_path):
    build, spec = C[name]
    model = build()
    randomize(model, np.random.default_rng(1))
    check_model(model, tmp_path, spec)


def _exportable_activations():
    from fkeras.export.converters.activations import EXPORTABLE_ACTIVATIONS

    return EXPORTABLE_ACTIVATIONS


@pytest.mark.parametrize("activation", _exportable_activations())
def test_activation_functions(activation, tmp_path):
    x = fkeras.Input((3, 6), name="x")
    y = L.Activation(activation)(x)
    y = L.Dense(4, activation=activation)(y)
    model = fkeras.Model(x, y)
    randomize(model, np.random.default_rng(2))
    check_model(model, tmp_path)


def test_gelu_approximate_through_ops(tmp_path):
    # keras.activations.gelu is exact; Activation accepts a callable with approximate=True
    # only as a user function, which has no conversion (checked in test_onnx_errors).
    x = fkeras.Input((6,), name="x")
    model = fkeras.Model(x, L.Dense(3, activation="gelu")(x))
    randomize(model, np.random.default_rng(3))
    check_model(model, tmp_path)


def _layer_classes(model):
    """Every layer class a model contains (wrapped layers, cells, sub-layers included)."""
    seen, stack = set(), list(model.layers)
    while stack:
        layer = stack.pop()
        seen.add(type(layer))
        for attr in ("layers", "forward_layer", "backward_layer", "layer", "cell",
                     "query_dense", "key_dense", "value_dense", "output_dense"):
            sub = getattr(layer, attr, None)
            if isinstance(sub, list):
                stack.extend(sub)
            elif sub is not None and hasattr(sub, "weights") and sub is not layer:
                stack.append(sub)
    return seen


@pytest.mark.filterwarnings("ignore:You passed `rms_scaling=True`")
def test_table_covers_every_converter():
    from fkeras.export.converters import CONVERTERS

    covered = set()
    for build, _ in C.values():
        covered |= _layer_classes(build())
    missing = sorted(cls.__name__ for cls in CONVERTERS if cls not in covered)
    assert not missing, f"layers with a converter but no case in the table: {missing}"
