"""GradientTape: gradients of a result with respect to chosen tensors.

minikeras records every op on tensors that require grad, so the tape does
not record anything itself: ``gradient()`` runs ``backward()`` on the
target and hands back the sources' gradients, leaving their ``.grad`` as it
found them. It exists so that custom training steps written for
``tf.GradientTape`` port unchanged; ``loss.backward()`` then reading
``variable.grad`` is the equivalent low-level way.
"""
from minikeras.autograd.tensor import Tensor
from minikeras._support.nest import flatten, pack_sequence_as


class GradientTape:
    """Context manager giving ``tape.gradient(target, sources)``.

    Args:
        persistent: allow several ``gradient()`` calls (the graph is kept).
        watch_accessed_variables: accepted for tf compatibility; every
            tensor that requires grad is watched.

    Example:
        >>> w = Variable([2.0])
        >>> with GradientTape() as tape:
        ...     loss = (w * w).sum()
        >>> tape.gradient(loss, [w])[0].numpy()
        array([4.], dtype=float32)
    """

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self.persistent = bool(persistent)
        self._used = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def watch(self, tensor):
        """Track gradients for ``tensor`` (or a nested structure of them)."""
        for item in flatten(tensor):
            if isinstance(item, Tensor) and item.is_leaf and not item.requires_grad:
                item.requires_grad_(True)

    def gradient(self, target, sources, output_gradients=None):
        """d(target)/d(source) for each source, in the sources' structure.

        Returns None for a source the target does not depend on, as tf does.
        A target with several elements, or a list of targets, is
        differentiated as the sum of all their elements (TensorFlow's rule:
        ``output_gradients`` of ones), so ``tape.gradient(y, x)`` with
        ``y = x * x`` gives ``2 * x``. ``Tensor.backward()`` stays strict and
        asks for an explicit gradient instead.

        Raises:
            RuntimeError: a second call on a tape that is not persistent.
            TypeError: a source that is not a Tensor.
        """
        if self._used and not self.persistent:
            raise RuntimeError("GradientTape.gradient can only be called once on a non-persistent tape; "
                               "use GradientTape(persistent=True) to call it several times.")
        self._used = True
        leaves = flatten(sources)
        for leaf in leaves:
            if not isinstance(leaf, Tensor):
                raise TypeError(f"GradientTape.gradient: sources must be Tensors or Variables, "
                                f"received {type(leaf).__name__}.")
        saved = [leaf.grad for leaf in leaves]
        for leaf in leaves:
            leaf.grad = None
        grads = []
        try:
            targets = flatten(target)
            seeds = flatten(output_gradients) if output_gradients is not None else [None] * len(targets)
            if len(seeds) != len(targets):
                raise ValueError(f"GradientTape.gradient: output_gradients must match the targets' structure; "
                                 f"received {len(seeds)} for {len(targets)} targets.")
            differentiable = [(t, seed) for t, seed in zip(targets, seeds)
                              if isinstance(t, Tensor) and t.requires_grad]
            for position, (one, seed) in enumerate(differentiable):
                # Later targets may share this graph: keep it until the last.
                keep = self.persistent or position < len(differentiable) - 1
                one.backward(_ones_like(one) if seed is None else seed, retain_graph=keep)
            grads = [leaf.grad for leaf in leaves]
        finally:
            for leaf, grad in zip(leaves, saved):
                leaf.grad = grad
        return pack_sequence_as(sources, grads) if isinstance(sources, (list, tuple, dict)) else grads[0]


def _ones_like(target):
    """The seed of a target's backward pass: ones (the gradient of its sum)."""
    with target.device.activate():
        return target.device.xp.ones_like(target.data)
