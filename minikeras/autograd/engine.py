"""Reverse-mode differentiation: walk the graph once, in reverse topological
order, and accumulate gradients into the leaves' ``.grad``."""
from minikeras.autograd.function import _QUIET_ACTIVATION, quiet_activation
from minikeras.autograd.tensor import array_of, from_array
from minikeras.device import op_errors


def _topological_order(root):
    """Functions reachable from ``root``, each before the ones it consumes.

    A depth-first post-order: a function is appended only after everything
    it reads from, so reversing it puts every consumer first. A function is
    marked visited when it is expanded, not when it is first seen, so one
    reached again through a shorter path still comes after all its inputs.
    """
    order = []
    visited = set()
    stack = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in visited:
            continue
        visited.add(id(node))
        stack.append((node, True))
        for parent in node._parents or ():
            if parent is not None and parent[1] >= 0 and id(parent[0]) not in visited:
                stack.append((parent[0], False))
    order.reverse()
    return order


def sum_to_shape(gradient, shape):
    """Sum a broadcast gradient back to ``shape``."""
    if gradient.shape == tuple(shape):
        return gradient
    extra = gradient.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(
        extra + i for i, size in enumerate(shape) if size == 1 and gradient.shape[extra + i] != 1
    )
    if axes:
        gradient = gradient.sum(axis=axes, keepdims=True)
    if extra:
        gradient = gradient.reshape(shape)
    return gradient


def _accumulate_leaf(leaf, gradient):
    device = leaf.device
    if gradient.dtype != leaf.data.dtype or leaf.grad is not None:  # array work: on the leaf's device
        with device.activate():
            if gradient.dtype != leaf.data.dtype:
                gradient = gradient.astype(leaf.data.dtype)
            if leaf.grad is not None:
                gradient = leaf.grad.data + gradient
    leaf.grad = from_array(gradient, device, None, 0)



def backward(tensor, gradient=None, retain_graph=False):
    """Compute d(tensor)/d(leaf) for every leaf that requires grad.

    Args:
        tensor: the Tensor to differentiate (usually a scalar loss).
        gradient: d(something)/d(tensor), an array of tensor's shape; may be
            omitted only for a tensor with one element.
        retain_graph: keep the graph (and the arrays it saved) for another
            backward; by default they are freed.
    """
    if not tensor.requires_grad:
        raise RuntimeError(
            "backward() called on a tensor that does not require grad: no input of the ops that made it "
            "had requires_grad=True, or it was computed inside no_grad()."
        )
    root = tensor._node
    if gradient is None and root is not None and root.takes_unit_gradient and root._n_outputs == 1:
        # The root's backward takes None for a seed of ones: no kernel to make them.
        _check_one_element(tensor)
    else:
        with tensor.device.activate():
            gradient = _initial_gradient(tensor, gradient)
        if root is None:
            _accumulate_leaf(tensor, gradient)
            return
    pending = {id(root): [None] * root._n_outputs}
    pending[id(root)][tensor._index] = gradient
    for function in _topological_order(root):
        if function._freed:
            raise RuntimeError(
                f"Trying to backward through the graph a second time (op {function.name}): its saved arrays "
                "were freed by the first backward(). Pass retain_graph=True to the first call."
            )
        grad_outputs = pending.pop(id(function), None)
        if grad_outputs is None:
            continue
        device = function.device
        if len(grad_outputs) > 1 and any(grad is None for grad in grad_outputs):
            with device.activate():
                grad_outputs = _fill_missing(function, grad_outputs)
        quiet = _QUIET_ACTIVATION.get(type(device))
        if quiet is None:
            quiet = quiet_activation(device)
        if quiet:  # (the CPU) no context to enter: three Python calls fewer per node
            try:
                grad_inputs = function.backward(*grad_outputs)
            except Exception:  # noqa: BLE001  (a host/GPU failure becomes the library's error)
                op_errors.reraise(device, f"the gradient of {function.name}")
        else:
            with device.activation_context:  # device.activate(), without the call
                try:
                    grad_inputs = function.backward(*grad_outputs)
                except Exception:  # noqa: BLE001
                    op_errors.reraise(device, f"the gradient of {function.name}")
        if type(grad_inputs) is not tuple:
            grad_inputs = tuple(grad_inputs) if type(grad_inputs) is list else (grad_inputs,)
        for parent, grad_input, shape in zip(function._parents, grad_inputs, function._input_shapes):
            if parent is None or grad_input is None:
                continue
            node, index = parent
            if grad_input.shape != shape:
                with node.device.activate():
                    grad_input = sum_to_shape(grad_input, shape)
            if index < 0:
                _accumulate_leaf(node, grad_input)
                continue
            # Counted on the consumer's device (memory limits cover backward too)
            # while it waits for that op's backward.
            node.device.memory.track(grad_input)
            slots = pending.get(id(node))
            if slots is None:
                if node._n_outputs == 1:
                    pending[id(node)] = [grad_input]
                    continue
                slots = pending[id(node)] = [None] * node._n_outputs
            previous = slots[index]
            if previous is not None:
                with node.device.activate():
                    grad_input = previous + grad_input
                node.device.memory.track(grad_input)
            slots[index] = grad_input
        if not retain_graph:
            function.saved = ()
            function._freed = True


def _check_one_element(tensor):
    if tensor.data.size != 1:
        raise RuntimeError(
            f"backward() without a gradient needs a tensor with one element; received shape "
            f"{tensor.shape}. Reduce it first (e.g. .sum()) or pass gradient=."
        )


def _initial_gradient(tensor, gradient):
    xp = tensor.device.xp
    if gradient is None:
        _check_one_element(tensor)
        gradient = xp.ones_like(tensor.data)
    else:
        gradient = tensor.device.asarray(array_of(gradient), tensor.data.dtype)
        if gradient.shape != tensor.data.shape:
            raise ValueError(
                f"backward(): the gradient has shape {gradient.shape}, the tensor {tensor.shape}; they must match."
            )
    return gradient


def _fill_missing(function, grad_outputs):
    """Zeros for outputs of a multi-output op that got no gradient."""
    shapes = getattr(function, "_output_meta", None)
    filled = []
    for i, grad in enumerate(grad_outputs):
        if grad is None:
            shape, dtype = shapes[i]
            grad = function.device.xp.zeros(shape, dtype=dtype)
        filled.append(grad)
    return filled
