"""Connectionist temporal classification: ``ctc_loss`` and ``ctc_decode``.

``ctc_loss`` runs the CTC forward (alpha) recursion in log space over the
blank-extended labels, for the whole batch at once, one time step per
iteration, with differentiable ops (``take_along_axis``, ``where``, a
three-way log-sum-exp), so the gradient with respect to the logits is
exact reverse-mode through the recursion. Impossible paths carry a large
negative log-probability (-1e30) rather than ``-inf``, so no NaN reaches a
gradient. Inputs are logits, as Keras's (a log-softmax is applied first).

``ctc_decode``: "greedy" takes the best class per step, merges repeats and
drops blanks, scoring ``-sum(max logit)`` (TensorFlow's
``ctc_greedy_decoder``); "beam_search" is the CTC prefix beam search on the
log-softmax of the inputs, scoring each returned path by the log
probability of its prefix. Both return ``(decoded, scores)`` with decoded
of shape ``(top_paths, batch, steps)`` padded with -1, as Keras.
"""

__all__ = ["ctc_loss", "ctc_decode"]

import numpy

from minikeras.autograd import Tensor
from minikeras.ops.array.joining import concatenate
from minikeras.ops.array.indexing import getitem
from minikeras.ops.array.sorting import take_along_axis
from minikeras.ops.array.reshaping import expand_dims, squeeze
from minikeras.ops.core import convert_to_numpy
from minikeras.ops.math._elementwise import operand
from minikeras.ops.math._operands import _as_tensor
from minikeras.ops.math.compare import maximum, where
from minikeras.ops.math.exp_log import exp, log
from minikeras.ops.nn.softmax import log_softmax

_IMPOSSIBLE = -1e30


def _log_add(*terms):
    largest = terms[0]
    for term in terms[1:]:
        largest = maximum(largest, term)
    largest = largest.detach()
    total = exp(terms[0] - largest)
    for term in terms[1:]:
        total = total + exp(term - largest)
    return largest + log(total)


def _shift(alpha, by):
    pad = alpha[:, :by] * 0 + _IMPOSSIBLE
    return concatenate([pad, alpha[:, :-by]], axis=1)


def ctc_loss(target, output, target_length, output_length, mask_index=0):
    """The CTC negative log-likelihood of each sequence: shape ``(batch,)``.

    Args:
        target: int labels ``(batch, max_label_length)`` (entries past ``target_length`` ignored).
        output: logits ``(batch, steps, classes)``.
        target_length, output_length: ``(batch,)`` lengths.
        mask_index: the blank class.
    """
    output = _as_tensor("ctc_loss", operand("ctc_loss", output))
    if output.dtype.kind != "f":
        output = output.astype("float32")
    labels = convert_to_numpy(target).astype(numpy.int64)
    label_lengths = convert_to_numpy(target_length).astype(numpy.int64).reshape(-1)
    steps_lengths = convert_to_numpy(output_length).astype(numpy.int64).reshape(-1)
    batch, steps, classes = output.shape
    if labels.ndim != 2 or labels.shape[0] != batch or label_lengths.shape != (batch,) \
            or steps_lengths.shape != (batch,):
        raise ValueError(f"ctc_loss: expected target (batch, L), lengths (batch,) for output {output.shape}, received "
                         f"{labels.shape}, {label_lengths.shape}, {steps_lengths.shape}.")
    blank = mask_index % classes
    width = 2 * labels.shape[1] + 1
    extended = numpy.full((batch, width), blank, dtype=numpy.int64)
    extended[:, 1::2] = labels
    positions = numpy.arange(width)[None, :]
    valid = positions < (2 * label_lengths[:, None] + 1)
    extended = numpy.where(valid, extended, blank)
    skip = numpy.zeros((batch, width), dtype=bool)
    skip[:, 2:] = (extended[:, 2:] != blank) & (extended[:, 2:] != extended[:, :-2])
    log_probs = log_softmax(output, axis=-1)
    emissions = take_along_axis(log_probs, Tensor(numpy.broadcast_to(extended[:, None, :], (batch, steps, width))
                                                 .copy(), device=output.device), axis=2)  # (B, T, S)
    start = numpy.full((batch, width), _IMPOSSIBLE)
    start[:, 0] = 0
    start[:, 1] = numpy.where(label_lengths > 0, 0, _IMPOSSIBLE)
    alpha = getitem(emissions, (slice(None), 0)) + start.astype(output.dtype)
    for t in range(1, steps):
        candidate = _log_add(alpha, _shift(alpha, 1), where(skip, _shift(alpha, 2), _IMPOSSIBLE))
        candidate = candidate + getitem(emissions, (slice(None), t))
        alpha = where((t < steps_lengths)[:, None], candidate, alpha)
    last = 2 * label_lengths
    final = take_along_axis(alpha, Tensor(numpy.stack([last, numpy.maximum(last - 1, 0)], 1), device=output.device),
                            axis=1)
    one_label = final[:, :1]
    both = _log_add(one_label, where((label_lengths > 0)[:, None], final[:, 1:], _IMPOSSIBLE))
    return -squeeze(both, 1)


def _greedy(scores, lengths, merge_repeated, blank):
    batch, steps, _ = scores.shape
    best = scores.argmax(axis=-1)
    decoded = numpy.full((1, batch, steps), -1, dtype=numpy.int32)
    totals = numpy.zeros((batch, 1), dtype=scores.dtype)
    for b in range(batch):
        length = int(lengths[b])
        totals[b, 0] = -scores[b, :length].max(axis=-1).sum()
        previous, written = None, 0
        for t in range(length):
            label = int(best[b, t])
            if label != blank and not (merge_repeated and label == previous):
                decoded[0, b, written] = label
                written += 1
            previous = label
    return decoded, totals


def _beam_search(log_probs, lengths, beam_width, top_paths, blank):
    batch, steps, classes = log_probs.shape
    decoded = numpy.full((top_paths, batch, steps), -1, dtype=numpy.int32)
    totals = numpy.full((batch, top_paths), -numpy.inf, dtype=log_probs.dtype)
    for b in range(batch):
        beams = {(): (0.0, -numpy.inf)}  # prefix -> (log p ending in blank, log p ending in a label)
        for t in range(int(lengths[b])):
            row = log_probs[b, t]
            candidates = {}

            def add(prefix, blank_score, label_score):
                old_blank, old_label = candidates.get(prefix, (-numpy.inf, -numpy.inf))
                candidates[prefix] = (numpy.logaddexp(old_blank, blank_score), numpy.logaddexp(old_label, label_score))

            for prefix, (p_blank, p_label) in beams.items():
                total = numpy.logaddexp(p_blank, p_label)
                add(prefix, total + row[blank], -numpy.inf)
                for label in range(classes):
                    if label == blank:
                        continue
                    if prefix and prefix[-1] == label:
                        add(prefix, -numpy.inf, p_label + row[label])  # repeat collapses
                        add(prefix + (label,), -numpy.inf, p_blank + row[label])
                    else:
                        add(prefix + (label,), -numpy.inf, total + row[label])
            ranked = sorted(candidates.items(), key=lambda item: -numpy.logaddexp(*item[1]))
            beams = dict(ranked[:beam_width])
        ranked = sorted(beams.items(), key=lambda item: -numpy.logaddexp(*item[1]))[:top_paths]
        for path, (prefix, scores) in enumerate(ranked):
            decoded[path, b, :len(prefix)] = prefix
            totals[b, path] = numpy.logaddexp(*scores)
    return decoded, totals


def ctc_decode(inputs, sequence_lengths, strategy="greedy", beam_width=100, top_paths=1, merge_repeated=True,
               mask_index=0):
    """Decode CTC outputs ``(batch, steps, classes)``: ``(decoded, scores)``; no gradient.

    Raises:
        ValueError: an unknown ``strategy``.
    """
    if strategy not in ("greedy", "beam_search"):
        raise ValueError(f"Invalid strategy {strategy}. Supported values are 'greedy' and 'beam_search'.")
    inputs = _as_tensor("ctc_decode", operand("ctc_decode", inputs))
    scores = convert_to_numpy(inputs)
    if scores.dtype.kind != "f":
        scores = scores.astype("float32")
    lengths = convert_to_numpy(sequence_lengths).astype(numpy.int64).reshape(-1)
    if scores.ndim != 3 or lengths.shape != (scores.shape[0],):
        raise ValueError(f"ctc_decode expects inputs (batch, steps, classes) and sequence_lengths (batch,), "
                         f"received {scores.shape} and {lengths.shape}.")
    blank = mask_index % scores.shape[-1] if mask_index is not None else scores.shape[-1] - 1
    if strategy == "greedy":
        decoded, totals = _greedy(scores, lengths, merge_repeated, blank)
    else:
        shifted = scores - scores.max(axis=-1, keepdims=True)
        log_probs = shifted - numpy.log(numpy.exp(shifted).sum(axis=-1, keepdims=True))
        decoded, totals = _beam_search(log_probs, lengths, int(beam_width), int(top_paths), blank)
    return Tensor(decoded, device=inputs.device), Tensor(totals, device=inputs.device)


del expand_dims
