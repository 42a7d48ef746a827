"""``keras.ops.ctc_decode``: greedy and prefix-beam-search decoding of CTC outputs.

"greedy" takes the best class per step, merges repeats and drops blanks,
scoring ``-sum(max logit)`` (TensorFlow's ``ctc_greedy_decoder``);
"beam_search" is the CTC prefix beam search on the log-softmax of the
inputs, scoring each returned path by the log probability of its prefix.
Both return ``(decoded, scores)`` with decoded of shape
``(top_paths, batch, steps)`` padded with -1, as Keras. Decoding runs on the
host (a data-dependent search) and has no gradient.
"""

__all__ = ["ctc_decode"]

import numpy

from minikeras.autograd import Tensor
from minikeras.ops.core import convert_to_numpy
from minikeras.ops.math._elementwise import operand
from minikeras.ops.math._operands import _as_tensor
from minikeras._support.argument_validation import validate_flag, validate_int


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
    if not isinstance(strategy, str) or strategy not in ("greedy", "beam_search"):
        raise ValueError(f"ctc_decode: strategy must be 'greedy' or 'beam_search', received {strategy!r}.")
    least = 1 if strategy == "beam_search" else 0  # the greedy strategy reads neither (Keras takes 0 there)
    beam_width = validate_int("ctc_decode", "beam_width", beam_width, minimum=least)
    top_paths = validate_int("ctc_decode", "top_paths", top_paths, minimum=least)
    if strategy == "beam_search" and top_paths > beam_width:
        raise ValueError(f"ctc_decode: top_paths ({top_paths}) must be at most beam_width ({beam_width}).")
    merge_repeated = validate_flag("ctc_decode", "merge_repeated", merge_repeated)
    inputs = _as_tensor("ctc_decode", operand("ctc_decode", inputs))
    scores = convert_to_numpy(inputs)
    if scores.dtype.kind != "f" or scores.dtype.itemsize < 4:
        scores = scores.astype("float32")  # Keras: result_type(inputs.dtype, "float32")
    lengths = convert_to_numpy(sequence_lengths)
    if lengths.dtype.kind not in "biuf":
        raise TypeError(f"ctc_decode: sequence_lengths must be numbers (cast to ints, as Keras), received dtype "
                        f"{lengths.dtype}.")
    if lengths.ndim != 1:
        raise ValueError(f"ctc_decode: sequence_lengths must be 1-D (one length per sequence), received shape "
                         f"{lengths.shape}.")
    lengths = lengths.astype(numpy.int64)
    if scores.ndim != 3 or lengths.shape != (scores.shape[0],):
        raise ValueError(f"ctc_decode expects inputs (batch, steps, classes) and sequence_lengths (batch,), "
                         f"received {scores.shape} and {lengths.shape}.")
    if lengths.size and (lengths.min() < 0 or lengths.max() > scores.shape[1]):
        raise ValueError(f"ctc_decode: sequence_lengths must be in [0, {scores.shape[1]}] (the steps of inputs), "
                         f"received {lengths.tolist()}.")
    classes = scores.shape[-1]
    blank = validate_int("ctc_decode", "mask_index", mask_index, minimum=-classes, maximum=classes - 1) % classes \
        if mask_index is not None else classes - 1
    if strategy == "greedy":
        decoded, totals = _greedy(scores, lengths, merge_repeated, blank)
    else:
        shifted = scores - scores.max(axis=-1, keepdims=True)
        log_probs = shifted - numpy.log(numpy.exp(shifted).sum(axis=-1, keepdims=True))
        decoded, totals = _beam_search(log_probs, lengths, beam_width, top_paths, blank)
    return Tensor(decoded, device=inputs.device), Tensor(totals, device=inputs.device)
