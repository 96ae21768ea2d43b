"""plot_model / model_to_dot: the Functional API guide's multi-input, multi-output "ticket"
model drawn through pydot and Graphviz's `dot` (PNG/SVG/PDF files checked by signature, dot
source by nodes, edges and labels), nested models, and the install errors. Compared with
Keras 3's model_to_dot when keras is importable."""

import re
import shutil
import sys

import pytest

import fkeras

try:
    import pydot
except ImportError:
    pydot = None
needs_pydot = pytest.mark.skipif(pydot is None,
                                 reason="pydot is not installed (the `plot` extra)")
needs_dot = pytest.mark.skipif(
    pydot is None or shutil.which("dot") is None,
    reason="pydot is not installed, or Graphviz's `dot` is not on the PATH (install the "
           "`graphviz` system package)")


def ticket_model(k):
    """The Functional API guide's ticket classifier (title/body/tags -> priority/department)."""
    num_tags, num_words, num_departments = 12, 10000, 4
    title = k.Input(shape=(None,), name="title")
    body = k.Input(shape=(None,), name="body")
    tags = k.Input(shape=(num_tags,), name="tags")
    t = k.layers.LSTM(128)(k.layers.Embedding(num_words, 64)(title))
    b = k.layers.LSTM(32)(k.layers.Embedding(num_words, 64)(body))
    x = k.layers.concatenate([t, b, tags])
    priority = k.layers.Dense(1, name="priority")(x)
    department = k.layers.Dense(num_departments, name="department")(x)
    return k.Model(inputs=[title, body, tags],
                   outputs={"priority": priority, "department": department})


def graph(dot):
    """{node id: label} and the set of (src, dst) edges of a pydot graph, clusters included."""
    nodes, edges = {}, set()
    stack = [dot]
    while stack:
        g = stack.pop()
        for n in g.get_nodes():
            if n.get_name() not in ("node", "edge", "graph"):
                nodes[n.get_name()] = n.get("label")
        edges |= {(e.get_source(), e.get_destination()) for e in g.get_edges()}
        stack.extend(g.get_subgraphs())
    return nodes, edges


def named_graph(dot):
    """Nodes as {layer name: label without colspans}, edges as (name, name) pairs."""
    nodes, edges = graph(dot)
    names = {i: re.search(r"<b>([^<]+)</b>", label).group(1) for i, label in nodes.items()}
    labels = {names[i]: re.sub(r' colspan="\d+"', "", label) for i, label in nodes.items()}
    return labels, {(names[a], names[b]) for a, b in edges}


TICKET_EDGES = {("title", "embedding"), ("body", "embedding_1"), ("embedding", "lstm"),
                ("embedding_1", "lstm_1"), ("lstm", "concatenate"), ("lstm_1", "concatenate"),
                ("tags", "concatenate"), ("concatenate", "priority"),
                ("concatenate", "department")}


@needs_pydot
def test_ticket_model_nodes_edges_and_labels():
    dot = fkeras.utils.model_to_dot(ticket_model(fkeras), show_shapes=True, show_dtype=True,
                                    show_layer_activations=True, show_trainable=True)
    labels, edges = named_graph(dot)
    assert len(labels) == 10 and edges == TICKET_EDGES
    source = dot.to_string()
    assert source.count("->") == 9
    assert "Input shape: <b>[(None, 128), (None, 32), (None, 12)]</b>" in labels["concatenate"]
    assert "Output shape: <b>(None, 172)</b>" in labels["concatenate"]
    assert "Input shape" not in labels["tags"] and "(None, 12)" in labels["tags"]
    assert "Activation: <b>tanh</b>" in labels["lstm"]
    assert "Activation: <b>linear</b>" in labels["priority"]
    assert "Output dtype: <b>float32</b>" in labels["department"]
    assert "Trainable" in labels["lstm"] and "Trainable" not in labels["concatenate"]
    assert "rankdir=TB" in source and "dpi=200" in source


@needs_pydot
def test_defaults_and_frozen_layers():
    model = ticket_model(fkeras)
    model.get_layer("lstm").trainable = False
    labels, _ = named_graph(fkeras.utils.model_to_dot(model, show_trainable=True))
    assert "Non-trainable" in labels["lstm"] and "Non-trainable" not in labels["lstm_1"]
    labels, _ = named_graph(fkeras.utils.model_to_dot(model))
    assert "(LSTM)" in labels["lstm"]  # show_layer_names=True by default in model_to_dot
    assert not any("shape" in v or "Activation" in v for v in labels.values())
    nodes, _ = graph(fkeras.utils.model_to_dot(model, show_layer_names=False))
    assert sorted(re.search(r"<b>([^<]+)</b>", v).group(1) for v in nodes.values()) == sorted(
        ["InputLayer"] * 3 + ["Embedding"] * 2 + ["LSTM"] * 2 + ["Concatenate"] + ["Dense"] * 2)


@needs_pydot
def test_sequential_draws_no_input_layer():
    model = fkeras.Sequential([fkeras.Input((4,)), fkeras.layers.Dense(3, name="a"),
                               fkeras.layers.Dense(2, name="b")])
    labels, edges = named_graph(fkeras.utils.model_to_dot(model))
    assert set(labels) == {"a", "b"} and edges == {("a", "b")}


def nested_model(k=fkeras):
    inner = k.Sequential([k.Input((4,)), k.layers.Dense(3, name="inner_a"),
                          k.layers.Dense(3, name="inner_b")], name="inner")
    inp = k.Input((4,), name="x")
    out = k.layers.Dense(1, name="head")(inner(inp))
    return k.Model(inp, out)


@needs_pydot
def test_expand_nested():
    model = nested_model()
    labels, edges = named_graph(fkeras.utils.model_to_dot(model))
    assert set(labels) == {"x", "inner", "head"}
    assert edges == {("x", "inner"), ("inner", "head")}
    dot = fkeras.utils.model_to_dot(model, expand_nested=True)
    labels, edges = named_graph(dot)
    assert set(labels) == {"x", "inner_a", "inner_b", "head"}
    assert edges == {("x", "inner_a"), ("inner_a", "inner_b"), ("inner_b", "head")}
    (cluster,) = dot.get_subgraphs()
    assert cluster.get("label") == "inner" and cluster.get_name() == "cluster_inner"


@needs_dot
@pytest.mark.parametrize("suffix,signature", [
    (".png", b"\x89PNG\r\n\x1a\n"), ("", b"\x89PNG\r\n\x1a\n"), (".svg", b"<?xml"),
    (".pdf", b"%PDF-"), (".dot", b"digraph")])
def test_plot_model_writes_the_format_of_the_extension(tmp_path, suffix, signature):
    path = tmp_path / f"model{suffix}"
    fkeras.utils.plot_model(ticket_model(fkeras), to_file=path, show_shapes=True,
                            expand_nested=True, dpi=50)
    data = path.read_bytes()
    assert data.startswith(signature) and len(data) > 1000
    if suffix == ".svg":
        text = data.decode()
        assert text.count('class="node"') == 10 and text.count('class="edge"') == 9


@needs_dot
def test_rankdir_changes_the_layout(tmp_path):
    import struct

    sizes = {}
    model = nested_model()
    for rankdir in ("TB", "LR"):
        path = tmp_path / f"{rankdir}.png"
        fkeras.utils.plot_model(model, to_file=str(path), rankdir=rankdir, dpi=40)
        width, height = struct.unpack(">II", path.read_bytes()[16:24])  # the IHDR chunk
        sizes[rankdir] = width / height
    assert sizes["TB"] < 1 < sizes["LR"]  # a chain of 3: tall top-down, wide left-right


def test_errors_and_missing_pydot(tmp_path, monkeypatch):
    """Needs no pydot: argument errors come first, then the install hint."""
    model = ticket_model(fkeras)
    with pytest.raises(ValueError, match="Unrecognized keyword arguments"):
        fkeras.utils.model_to_dot(model, colour="red")
    with pytest.raises(ValueError, match="layer_range"):
        fkeras.utils.plot_model(model, layer_range=["a", "b"])
    with pytest.raises(ValueError, match="not yet been built"):
        fkeras.utils.plot_model(fkeras.Sequential([fkeras.layers.Dense(2)]))
    monkeypatch.setitem(sys.modules, "pydot", None)
    with pytest.raises(ImportError, match=r"pip install pydot"):
        fkeras.utils.plot_model(model, to_file=tmp_path / "m.png")
    with pytest.raises(ImportError, match=r"pip install pydot"):
        fkeras.utils.model_to_dot(model)


@needs_pydot
def test_missing_graphviz_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` there
    with pytest.raises(ImportError, match=r"apt-get install graphviz"):
        fkeras.utils.plot_model(ticket_model(fkeras), to_file=tmp_path / "m.png")
    assert not (tmp_path / "m.png").exists()


def nested_functional(k=fkeras):
    """A two-input Functional model used inside another one, twice."""
    a, b = k.Input((3,), name="in_a"), k.Input((3,), name="in_b")
    inner = k.Model([a, b], k.layers.Dense(2, name="mix")(k.layers.Add(name="add")([a, b])),
                    name="pair")
    x = k.Input((3,), name="x")
    h = k.layers.Dense(3, name="pre")(x)
    out = k.layers.Concatenate(name="cat")([inner([x, h]), inner([h, x])])
    return k.Model(x, out)


@needs_pydot
def test_nested_functional_edges_reach_inside():
    _, edges = named_graph(fkeras.utils.model_to_dot(nested_functional(), expand_nested=True))
    assert edges == {("x", "pre"), ("x", "in_a"), ("pre", "in_b"), ("pre", "in_a"),
                     ("x", "in_b"), ("in_a", "add"), ("in_b", "add"), ("add", "mix"),
                     ("mix", "cat")}


@needs_pydot
@pytest.mark.parametrize("build", [ticket_model, nested_model, nested_functional])
@pytest.mark.parametrize("expand_nested", [False, True])
def test_same_graph_as_keras(build, expand_nested):
    keras = pytest.importorskip("keras")
    keras.utils.clear_session()
    options = dict(show_shapes=True, show_dtype=True, show_layer_activations=True,
                   show_trainable=True, expand_nested=expand_nested)
    mine = named_graph(fkeras.utils.model_to_dot(build(fkeras), **options))
    theirs = named_graph(keras.utils.model_to_dot(build(keras), **options))
    assert mine == theirs
