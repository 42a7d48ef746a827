"""``utils.model_to_dot`` and ``utils.plot_model``: a model's graph in
Graphviz's DOT language, with Keras's arguments and node labels.

The DOT text is written here with no dependency at all, so
``plot_model(model, "model.dot")`` always works. Images (``.png``, ``.svg``,
``.pdf``...) need Graphviz's ``dot`` program: through pydot when it is
installed (``model_to_dot`` returns a ``pydot.Dot``, as in Keras), otherwise
by running ``dot`` directly; without Graphviz a clear ImportError says what
to install.
"""
import html
import os
import shutil
import subprocess

from minikeras._support.nest import flatten


class DotGraph:
    """A DOT graph: nodes with HTML-like labels, edges, nested clusters."""

    def __init__(self, name="G", cluster=False, **attributes):
        self.name = name
        self.cluster = cluster
        self.attributes = attributes
        self.nodes = {}
        self.edges = []
        self.subgraphs = []

    def add_node(self, node_id, label):
        self.nodes[node_id] = label

    def add_edge(self, source, destination):
        if (source, destination) not in self.edges:
            self.edges.append((source, destination))

    def to_string(self, indent=""):
        """The graph as DOT text."""
        kind = f"subgraph cluster_{_quote_id(self.name)[1:-1]}" if self.cluster else "digraph G"
        lines = [f"{indent}{kind} {{"]
        for key, value in self.attributes.items():
            lines.append(f"{indent}  {key}={_quote(value)};")
        if not self.cluster:
            lines.append(f"{indent}  node [shape=record];")
        for node_id, label in self.nodes.items():
            lines.append(f'{indent}  {_quote_id(node_id)} [label={label}, fontname="Helvetica", border=0, margin=0];')
        for subgraph in self.subgraphs:
            lines.append(subgraph.to_string(indent + "  "))
        for source, destination in self.edges:
            lines.append(f"{indent}  {_quote_id(source)} -> {_quote_id(destination)} [penwidth=2];")
        lines.append(f"{indent}}}")
        return "\n".join(lines)

    def all_edges(self):
        """Edges of this graph and of its clusters."""
        return self.edges + [edge for subgraph in self.subgraphs for edge in subgraph.all_edges()]


def _quote_id(value):
    return '"' + str(value).replace('"', '\\"') + '"'


def _quote(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return _quote_id(value)


def _shape_text(tensors):
    shapes = [tuple(tensor.shape) for tensor in tensors]
    if not shapes:
        return "?"
    return str(shapes[0]) if len(shapes) == 1 else str(shapes)


def _activation_name(layer):
    activation = layer.activation
    return getattr(activation, "name", None) or getattr(activation, "__name__", None) or str(activation)


def _first_node(layer):
    nodes = getattr(layer, "_inbound_nodes", [])
    return nodes[0] if nodes else None


def make_layer_label(layer, show_layer_names, show_layer_activations, show_dtype, show_shapes, show_trainable):
    """Keras's HTML-like table label of one layer's node."""
    class_name = getattr(layer, "keras_class_name", type(layer).__name__)
    span = max(1, int(show_dtype) + int(show_trainable) + (2 if show_shapes else 0))
    title = f"<b>{html.escape(layer.name)}</b> ({class_name})" if show_layer_names else f"<b>{class_name}</b>"
    table = ('<<table border="0" cellborder="1" bgcolor="black" cellpadding="10">'
             f'<tr><td colspan="{span}" bgcolor="black"><font point-size="16" color="white">{title}</font></td></tr>')
    if show_layer_activations and getattr(layer, "activation", None) is not None:
        table += (f'<tr><td bgcolor="white" colspan="{span}"><font point-size="14">Activation: '
                  f"<b>{html.escape(_activation_name(layer))}</b></font></td></tr>")
    node = _first_node(layer)
    outputs = flatten(node.outputs) if node is not None else []
    cells = []
    if show_shapes:
        if class_name != "InputLayer":
            inputs = [t for t in flatten(node.inputs)] if node is not None else []
            cells.append(f'<td bgcolor="white"><font point-size="14">Input shape: <b>{_shape_text(inputs)}</b>'
                         "</font></td>")
        cells.append(f'<td bgcolor="white"><font point-size="14">Output shape: <b>{_shape_text(outputs)}</b>'
                     "</font></td>")
    if show_dtype:
        dtypes = [str(tensor.dtype) for tensor in outputs]
        dtype = (dtypes[0] if len(dtypes) == 1 else str(dtypes)) if dtypes else "?"
        cells.append(f'<td bgcolor="white"><font point-size="14">Output dtype: <b>{dtype}</b></font></td>')
    if show_trainable and layer.weights:
        cells.append('<td bgcolor="forestgreen"><font point-size="14" color="white"><b>Trainable</b></font></td>'
                     if layer.trainable else
                     '<td bgcolor="firebrick"><font point-size="14" color="white"><b>Non-trainable</b></font></td>')
    if cells:
        table += f"<tr>{''.join(cells)}</tr>"
    return table + "</table>>"


def _graph(model, label_options, rankdir, expand_nested, dpi, splines, subgraph=False):
    from minikeras.layers.core.input_layer import InputLayer
    from minikeras.models.functional import Functional
    from minikeras.models.sequential import Sequential

    if subgraph:
        graph = DotGraph(model.name, cluster=True, style="dashed", label=model.name, labeljust="l")
    else:
        graph = DotGraph(rankdir=rankdir, concentrate=True, dpi=dpi, splines=splines)
    if not isinstance(model, (Functional, Sequential)):
        graph.add_node(str(id(model)), make_layer_label(model, **label_options))
        return graph
    # A functional model's operations (``inputs + x``) are nodes of the drawing too, as in Keras.
    layers = model._layers if isinstance(model, Functional) else model.layers
    for layer in layers:
        if expand_nested and isinstance(layer, (Functional, Sequential)):
            graph.subgraphs.append(_graph(layer, label_options, rankdir, expand_nested, dpi, splines, True))
        else:
            graph.add_node(str(id(layer)), make_layer_label(layer, **label_options))
    if isinstance(model, Sequential) and not expand_nested:
        for source, destination in zip(layers, layers[1:]):
            graph.add_edge(str(id(source)), str(id(destination)))
        return graph

    def entry(layer):  # where an edge into an expanded nested model lands, as in Keras
        while expand_nested and isinstance(layer, (Functional, Sequential)):
            layer = layer.layers[0] if isinstance(layer, Sequential) else layer.inputs[0].node.layer
        return layer

    def exit_(layer):
        while expand_nested and isinstance(layer, (Functional, Sequential)):
            layer = layer.outputs[0].node.layer
        return layer

    nodes = model._nodes if isinstance(model, Functional) else \
        [node for layer in layers for node in getattr(layer, "_inbound_nodes", [])[:1]]
    for node in nodes:
        if isinstance(node.layer, InputLayer):
            continue
        for parent in node.parent_tensors:
            source = parent.node.layer
            if isinstance(model, Sequential) and source not in layers:
                continue
            graph.add_edge(str(id(exit_(source))), str(id(entry(node.layer))))
    return graph


def _check_built(model):
    if not getattr(model, "built", False):
        raise ValueError("This model has not yet been built. Build the model first by calling `build()` or by calling "
                         "the model on a batch of data.")


def model_to_graph(model, show_shapes=False, show_dtype=False, show_layer_names=True, rankdir="TB",
                   expand_nested=False, dpi=200, show_layer_activations=False, show_trainable=False, splines="ortho"):
    """The model's graph as a ``DotGraph`` (``.to_string()`` gives DOT text);
    no dependency needed."""
    _check_built(model)
    options = {"show_layer_names": show_layer_names, "show_layer_activations": show_layer_activations,
               "show_dtype": show_dtype, "show_shapes": show_shapes, "show_trainable": show_trainable}
    return _graph(model, options, rankdir, expand_nested, dpi, splines)


def _check_keyword_arguments(kwargs):
    if kwargs.pop("layer_range", None) is not None:
        raise ValueError("Argument `layer_range` is no longer supported.")
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments: {kwargs}")


def model_to_dot(model, show_shapes=False, show_dtype=False, show_layer_names=True, rankdir="TB",
                 expand_nested=False, dpi=200, subgraph=False, show_layer_activations=False, show_trainable=False,
                 splines="ortho", **kwargs):
    """The model as a ``pydot.Dot``, as Keras's ``model_to_dot``.

    Args:
        model: a built model.
        show_shapes, show_dtype, show_layer_names, show_layer_activations,
        show_trainable: what each node shows.
        rankdir: ``"TB"`` (vertical) or ``"LR"`` (horizontal).
        expand_nested: draw nested models as clusters of their layers.
        dpi: the image resolution.
        subgraph: return a cluster (for nesting) instead of a graph.
        splines: Graphviz's edge style.

    Raises:
        ImportError: pydot is not installed (``model_to_graph`` and
            ``plot_model(..., "x.dot")`` need nothing).
    """
    _check_keyword_arguments(kwargs)
    try:
        import pydot
    except ImportError:
        raise ImportError("You must install pydot (`pip install pydot`) for model_to_dot to work. (Without it, "
                          "plot_model(model, 'model.dot') writes the DOT text.)") from None
    graph = model_to_graph(model, show_shapes, show_dtype, show_layer_names, rankdir, expand_nested, dpi,
                           show_layer_activations, show_trainable, splines)
    if subgraph:
        graph.cluster, graph.attributes, graph.name = True, {"style": "dashed", "label": model.name,
                                                             "labeljust": "l"}, model.name
    return _to_pydot(pydot, graph)


def _to_pydot(pydot, graph):
    """The same graph as pydot objects (built directly: parsing DOT text
    with pydot's parser is slow)."""
    if graph.cluster:
        dot = pydot.Cluster(graph_name=graph.name, **{key: str(value) for key, value in graph.attributes.items()})
    else:
        dot = pydot.Dot(**{key: value for key, value in graph.attributes.items()})
        dot.set_node_defaults(shape="record")
    for node_id, label in graph.nodes.items():
        dot.add_node(pydot.Node(node_id, label=label, fontname="Helvetica", border="0", margin="0"))
    for subgraph in graph.subgraphs:
        dot.add_subgraph(_to_pydot(pydot, subgraph))
    for source, destination in graph.edges:
        dot.add_edge(pydot.Edge(source, destination, penwidth="2"))
    return dot


def plot_model(model, to_file="model.png", show_shapes=False, show_dtype=False, show_layer_names=False, rankdir="TB",
               expand_nested=False, dpi=200, show_layer_activations=False, show_trainable=False, splines="ortho",
               **kwargs):
    """Draw the model into ``to_file``, as Keras's ``plot_model``.

    The format is the file's extension (``png`` when it has none): ``.dot``
    is written directly; other formats are rendered by Graphviz's ``dot``
    (through pydot when installed).

    Raises:
        ImportError: an image format was asked for and Graphviz is missing.
    """
    _check_keyword_arguments(kwargs)
    graph = model_to_graph(model, show_shapes, show_dtype, show_layer_names, rankdir, expand_nested, dpi,
                           show_layer_activations, show_trainable, splines)
    to_file = os.fspath(to_file)
    extension = os.path.splitext(to_file)[1][1:].lower() or "png"
    text = graph.to_string()
    if extension in ("dot", "gv"):
        with open(to_file, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
        return None
    executable = shutil.which("dot")
    if executable is None:
        raise ImportError(f"You must install graphviz (see instructions at https://graphviz.gitlab.io/download/) "
                          f"for `plot_model` to write a .{extension} file; or write the graph as DOT text with "
                          "plot_model(model, 'model.dot'), which needs nothing.")
    try:
        import pydot
    except ImportError:
        subprocess.run([executable, f"-T{extension}", "-o", to_file], input=text.encode("utf-8"), check=True,
                       capture_output=True)
    else:
        _to_pydot(pydot, graph).write(to_file, format=extension)
    return None
