"""``model.summary()``: layers, output shapes and parameter counts."""
import numpy


def _count(weights):
    return int(sum(int(numpy.prod(w.shape)) for w in weights))


def _output_shape(layer):
    nodes = getattr(layer, "_inbound_nodes", [])
    if nodes:
        outputs = nodes[-1].outputs
        if isinstance(outputs, (list, tuple)):
            shapes = [getattr(t, "shape", None) for t in outputs]
            return str(shapes[0] if len(shapes) == 1 else shapes)
        return str(getattr(outputs, "shape", "?"))
    return "?" if not layer.built else "(built)"


def print_summary(model, line_length=None, print_fn=None):
    """Print a Keras-style table of the model's layers."""
    print_fn = print_fn or print
    line_length = line_length or 80
    widths = [int(line_length * 0.42), int(line_length * 0.33)]
    widths.append(line_length - sum(widths))
    rows = []
    from minikeras.layers.input import InputLayer

    for layer in model.layers:
        if isinstance(layer, InputLayer):
            continue
        label = f"{layer.name} ({type(layer).__name__})"
        params = _count(layer.weights) if layer.built else 0
        rows.append((label, _output_shape(layer), f"{params:,}"))

    def line(cells):
        return "".join(str(cell)[: w - 1].ljust(w) for cell, w in zip(cells, widths))

    print_fn(f'Model: "{model.name}"')
    print_fn("_" * line_length)
    print_fn(line(("Layer (type)", "Output Shape", "Param #")))
    print_fn("=" * line_length)
    for i, row in enumerate(rows):
        print_fn(line(row))
        print_fn("_" * line_length if i < len(rows) - 1 else "=" * line_length)
    if not rows:
        print_fn("=" * line_length)
    trainable = _count(model.trainable_weights)
    non_trainable = _count(model.non_trainable_weights)
    print_fn(f"Total params: {trainable + non_trainable:,}")
    print_fn(f"Trainable params: {trainable:,}")
    print_fn(f"Non-trainable params: {non_trainable:,}")
    print_fn("_" * line_length)
