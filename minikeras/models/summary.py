"""``model.summary()`` in Keras 3's layout.

A boxed table of layers (full names, never cut), their output shapes and
parameter counts; functional models list their Input rows, and get a
"Connected to" column when the graph is not a simple chain. Then the
totals with their sizes in bytes, and the optimizer's state once it has
been built.
"""
import numpy

from minikeras._support.nest import flatten

_UNITS = ("B", "KB", "MB", "GB", "TB", "PB")


def readable_size(size):
    """``708`` -> ``"708.00 B"``, ``2048`` -> ``"2.00 KB"`` (1024 steps, as Keras)."""
    for unit in _UNITS:
        if size < 1024 or unit == _UNITS[-1]:
            return f"{size:.2f} {unit}"
        size /= 1024


def _count(weights):
    return int(sum(int(numpy.prod(w.shape)) for w in weights))


def _bytes(weights):
    return int(sum(int(numpy.prod(w.shape)) * numpy.dtype(w.dtype).itemsize for w in weights))


def _shape_text(tensors):
    shapes = [tuple(getattr(t, "shape", ())) for t in tensors]
    return str(shapes[0]) if len(shapes) == 1 else str(shapes)


def _output_shape(layer):

    nodes = getattr(layer, "_inbound_nodes", [])
    if nodes:
        return _shape_text(flatten(nodes[-1].outputs))
    if hasattr(layer, "output"):  # an InputLayer
        return _shape_text([layer.output])
    return "?"  # a layer of a subclassed model: Keras shows "?" too unless it can infer the shape


def _connections(layer, model_nodes):
    """``["dense[0][0]", ...]``: the layer outputs each call of ``layer`` reads."""
    found = []
    for node in layer._inbound_nodes:
        if not any(node is known for known in model_nodes):
            continue
        for parent in node.parent_tensors:
            source = parent.node.layer
            calls = [n for n in source._inbound_nodes if any(n is known for known in model_nodes)]
            index = next((i for i, n in enumerate(calls) if n is parent.node), 0)
            found.append(f"{source.name}[{index}][{parent.index}]")
    return found


def _is_chain(model):
    """True for graphs where every layer is called once on one tensor that
    no other layer reads: Keras then leaves out "Connected to"."""
    nodes = getattr(model, "_nodes", None)
    if nodes is None:
        return True
    if len(model.inputs) != 1 or len(model.outputs) != 1:
        return False
    readers = {}
    for node in nodes:
        parents = node.parent_tensors
        if len(parents) > 1 or len(node.layer._inbound_nodes) > 1:
            return False
        for parent in parents:
            readers[id(parent)] = readers.get(id(parent), 0) + 1
    return all(count == 1 for count in readers.values())


def _table(headers, rows, right_aligned):
    widths = [max([len(headers[i])] + [len(row[i]) for row in rows]) for i in range(len(headers))]
    minimums = {"Layer (type)": 31, "Output Shape": 22, "Param #": 13, "Connected to": 22}
    widths = [max(width, minimums.get(header, 0)) for width, header in zip(widths, headers)]

    def cells(values, left, middle, right):
        texts = [(value.rjust(width) if i in right_aligned else value.ljust(width))
                 for i, (value, width) in enumerate(zip(values, widths))]
        return left + " " + f" {middle} ".join(texts) + " " + right

    def rule(left, fill, middle, right):
        return left + middle.join(fill * (width + 2) for width in widths) + right

    lines = [rule("┏", "━", "┳", "┓"), cells(headers, "┃", "┃", "┃"), rule("┡", "━", "╇", "┩")]
    for i, row in enumerate(rows):
        lines.append(cells(row, "│", "│", "│"))
        lines.append(rule("├", "─", "┼", "┤") if i < len(rows) - 1 else rule("└", "─", "┴", "┘"))
    if not rows:
        lines.append(rule("└", "─", "┴", "┘"))
    return lines


def _optimizer_state(model):
    optimizer = getattr(model, "optimizer", None)
    if optimizer is None or not getattr(optimizer, "built", False):
        return None
    arrays = list(optimizer.variables)
    count, size = _count(arrays), _bytes(arrays)
    if isinstance(getattr(optimizer, "_learning_rate", None), (int, float)):
        count, size = count + 1, size + 4  # Keras keeps the learning rate as a float32 variable
    return count, size


def print_summary(model, line_length=None, print_fn=None, show_trainable=False):
    """Print a Keras 3 style table of the model's layers.

    Args:
        model: a built (or buildable) Model.
        line_length: accepted for Keras compatibility; the columns fit the
            longest name and shape instead.
        print_fn: called with each line (default ``print``).
        show_trainable: add a "Trainable" column.
    """
    from minikeras.layers.base import Layer
    from minikeras.layers.core.input_layer import InputLayer

    print_fn = print_fn or print
    functional = getattr(model, "_nodes", None) is not None
    chain = _is_chain(model)
    headers = ["Layer (type)", "Output Shape", "Param #"]
    if not chain:
        headers.append("Connected to")
    if show_trainable:
        headers.append("Trainable")
    rows = []
    # Keras lists a functional model's operations (``inputs + x``) as rows too.
    for layer in getattr(model, "_layers", None) if functional else model.layers:
        if isinstance(layer, InputLayer) and not functional:
            continue
        params = f"{_count(layer.weights):,}"
        if not layer.built and type(layer).build is not Layer.build:
            params = "0 (unbuilt)"  # its weights are made on the first call
        row = [f"{layer.name} ({getattr(layer, 'keras_class_name', type(layer).__name__)})", _output_shape(layer),
               params]
        if not chain:
            row.append(", ".join(_connections(layer, model._nodes)) or "-")
        if show_trainable:
            row.append("Y" if layer.trainable else "N")
        rows.append(row)
    print_fn(f'Model: "{model.name}"')
    for line in _table(headers, rows, right_aligned={2}):
        print_fn(line)
    trainable, non_trainable = model.trainable_weights, model.non_trainable_weights
    optimizer = _optimizer_state(model)
    total_count = _count(trainable) + _count(non_trainable) + (optimizer[0] if optimizer else 0)
    total_size = _bytes(trainable) + _bytes(non_trainable) + (optimizer[1] if optimizer else 0)
    print_fn(f" Total params: {total_count:,} ({readable_size(total_size)})")
    print_fn(f" Trainable params: {_count(trainable):,} ({readable_size(_bytes(trainable))})")
    print_fn(f" Non-trainable params: {_count(non_trainable):,} ({readable_size(_bytes(non_trainable))})")
    if optimizer:
        print_fn(f" Optimizer params: {optimizer[0]:,} ({readable_size(optimizer[1])})")
