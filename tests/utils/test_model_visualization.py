"""plot_model / model_to_dot (minikeras/utils/model_visualization.py): the DOT
text's structure (nodes, labels, edges, clusters), Keras's arguments, and the
messages when pydot or Graphviz is missing."""
import re
import shutil

import pytest

import minikeras as mk
from minikeras import layers

_NODE = re.compile(r'^\s*"(\d+)" \[label=<(.*)>, fontname')
_EDGE = re.compile(r'^\s*"(\d+)" -> "(\d+)"')


def _parse(text):
    nodes, edges = {}, []
    for line in text.splitlines():
        node = _NODE.match(line)
        if node:
            nodes[node.group(1)] = node.group(2)
        edge = _EDGE.match(line)
        if edge:
            edges.append(edge.groups())
    return nodes, edges


def _branching():
    inputs = mk.Input((4,), name="features")
    left = layers.Dense(3, activation="relu", name="left")(inputs)
    right = layers.Dense(3, name="right")(inputs)
    frozen = layers.Dense(3, name="frozen")
    frozen.trainable = False
    merged = layers.Add(name="merge")([left, frozen(right)])
    return mk.Model(inputs, layers.Dense(1, name="out")(merged))


def test_dot_file_has_one_node_per_layer_and_the_graph_edges(tmp_path):
    model = _branching()
    mk.utils.plot_model(model, to_file=tmp_path / "model.dot", show_shapes=True, show_dtype=True,
                        show_layer_names=True, show_layer_activations=True, show_trainable=True, rankdir="LR")
    text = (tmp_path / "model.dot").read_text()
    assert text.startswith("digraph G {") and 'rankdir="LR"' in text and "dpi=200" in text
    nodes, edges = _parse(text)
    names = {node_id: re.search(r"<b>(\w+)</b> \((\w+)\)", label).groups() for node_id, label in nodes.items()}
    by_name = {name: node_id for node_id, (name, _) in names.items()}
    assert set(by_name) == {"features", "left", "right", "frozen", "merge", "out"}
    expected = {("features", "left"), ("features", "right"), ("right", "frozen"), ("left", "merge"),
                ("frozen", "merge"), ("merge", "out")}
    assert {(names[a][0], names[b][0]) for a, b in edges} == expected
    assert "Activation: <b>relu</b>" in nodes[by_name["left"]]
    assert "Input shape: <b>(None, 4)</b>" in nodes[by_name["left"]]
    assert "Output shape: <b>(None, 3)</b>" in nodes[by_name["left"]]
    assert "Input shape: <b>[(None, 3), (None, 3)]</b>" in nodes[by_name["merge"]]
    assert "Output dtype: <b>float32</b>" in nodes[by_name["out"]]
    assert "Non-trainable" in nodes[by_name["frozen"]] and ">Trainable<" in nodes[by_name["left"]]
    assert "Input shape" not in nodes[by_name["features"]]  # an InputLayer shows its output only


def test_defaults_show_class_names_only(tmp_path):
    mk.utils.plot_model(_branching(), to_file=tmp_path / "plain.dot")
    nodes, edges = _parse((tmp_path / "plain.dot").read_text())
    assert len(nodes) == 6 and len(edges) == 6
    assert all("shape" not in label and "Activation" not in label for label in nodes.values())
    assert sorted(re.search(r"<b>(\w+)</b>", label).group(1) for label in nodes.values()) == \
        ["Add", "Dense", "Dense", "Dense", "Dense", "InputLayer"]


def test_sequential_chain_and_expanded_nested_model(tmp_path):
    inner = mk.Sequential([layers.Dense(4, input_shape=(3,), name="a"), layers.Dense(2, name="b")], name="inner")
    inputs = mk.Input((3,), name="x")
    outer = mk.Model(inputs, layers.Dense(1, name="head")(inner(inputs)))
    mk.utils.plot_model(inner, to_file=tmp_path / "inner.dot", show_layer_names=True)
    nodes, edges = _parse((tmp_path / "inner.dot").read_text())
    assert len(nodes) == 2 and len(edges) == 1
    mk.utils.plot_model(outer, to_file=tmp_path / "outer.dot", show_layer_names=True, expand_nested=True)
    text = (tmp_path / "outer.dot").read_text()
    assert 'subgraph cluster_inner {' in text and 'label="inner"' in text
    nodes, edges = _parse(text)
    names = {node_id: re.search(r"<b>(\w+)</b>", label).group(1) for node_id, label in nodes.items()}
    assert {(names[a], names[b]) for a, b in edges} == {("x", "a"), ("a", "b"), ("b", "head")}
    mk.utils.plot_model(outer, to_file=tmp_path / "folded.dot", show_layer_names=True)
    nodes, _ = _parse((tmp_path / "folded.dot").read_text())
    assert sorted(re.search(r"<b>(\w+)</b>", label).group(1) for label in nodes.values()) == ["head", "inner", "x"]


def test_model_to_dot_gives_pydot_and_errors():
    pydot = pytest.importorskip("pydot", reason="pydot is not installed (extra 'pydot')")
    dot = mk.utils.model_to_dot(_branching(), show_shapes=True)
    assert isinstance(dot, pydot.Dot) and len(dot.get_nodes()) >= 6 and len(dot.get_edges()) == 6
    with pytest.raises(ValueError, match="layer_range"):
        mk.utils.model_to_dot(_branching(), layer_range=["a", "b"])
    with pytest.raises(ValueError, match="not yet been built"):
        mk.utils.plot_model(mk.Sequential([layers.Dense(2)]), to_file="never.dot")


@pytest.mark.skipif(shutil.which("dot") is not None, reason="Graphviz is installed here")
def test_image_formats_without_graphviz_say_what_to_install(tmp_path):
    with pytest.raises(ImportError, match="graphviz"):
        mk.utils.plot_model(_branching(), to_file=tmp_path / "model.png")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_png_and_svg_through_graphviz(tmp_path):
    mk.utils.plot_model(_branching(), to_file=tmp_path / "model.png")
    assert (tmp_path / "model.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    mk.utils.plot_model(_branching(), to_file=tmp_path / "model.svg")
    assert b"<svg" in (tmp_path / "model.svg").read_bytes()
