"""The logits behind a softmax or sigmoid output, kept beside the output.

A layer whose activation is softmax or sigmoid attaches its pre-activation
logits to the output (``attach_logits``) so that a crossentropy loss can
take the numerically stable logits path (``logits_of``), as tf.keras does
with ``_keras_logits``; crossentropy.py's ``attached_logits`` checks that
they fit the loss.
"""
from minikeras._support.weak_table import WeakIdentityTable

__all__ = ["attach_logits", "logits_of"]

_logits = WeakIdentityTable()


def attach_logits(output, logits):
    """Remember ``logits`` (a Tensor, or ``(logits, "softmax"|"sigmoid")``)
    as the logits of ``output``; None forgets them."""
    _logits.set(output, logits)


def logits_of(output):
    """What :func:`attach_logits` attached to ``output``, or None."""
    return _logits.get(output)
