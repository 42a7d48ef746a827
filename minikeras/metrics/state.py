"""A metric's accumulated state, to combine copies that replicas updated apart.

Data parallelism gives every replica its own copy of each metric (so that
no two threads update one object, and every replica's step is the model's
own); the logs are then the result of the copies' combined state, as
``tf.distribute`` reads a metric's SUM-aggregated variables. A metric's state is:

- its Variables (``add_variable``/``add_weight``), combined by their
  ``aggregation``: "sum" (Keras's default for metrics) added, "mean"
  averaged, "only_first_replica" taken from the first copy;
- the attributes its class names in ``_summed_state`` (the built-in
  metrics keep host floats and NumPy arrays: Mean's total and count, AUC's
  confusion counts...), added;
- the state of the metrics it holds (AutoAccuracy's resolved metric, the
  compiled metrics' container), combined the same way.

A copy that never saw a batch may lack a part another has (a lazily sized
array, a metric not resolved yet): it counts as zero there.
"""
import copy

import numpy

__all__ = ["combined", "state_arrays", "set_state_arrays"]


def _sub_metrics(metric):
    """``[(key, sub-metric or None)]``: the metrics ``metric`` holds."""
    held = getattr(type(metric), "_held_metrics", ())
    found = [(name, getattr(metric, name, None)) for name in held]
    if not held and hasattr(metric, "entries"):  # the compiled metrics' container
        found = [(index, sub) for index, (_, sub) in enumerate(metric.entries)]
    return found


def _parts(metric):
    """``[(key, kind, value)]`` of ``metric``'s own state (kind: an aggregation)."""
    parts = [(f"variable:{index}", variable.aggregation, variable) for index, variable in
             enumerate(getattr(metric, "variables", ()))]
    parts += [(name, "sum", getattr(metric, name)) for name in getattr(metric, "_summed_state", ())]
    return parts


def _value(value):
    return value.numpy() if hasattr(value, "numpy") and not isinstance(value, numpy.ndarray) else \
        numpy.asarray(value, dtype=numpy.float64)


def _is_empty(value):
    return numpy.size(value) == 0


def _combine_into(target, sources):
    """Give ``target`` (a copy) the combined state of itself and ``sources``."""
    for key, kind, value in _parts(target):
        values = [_value(value)]
        for source in sources:
            other = next((v for k, _, v in _parts(source) if k == key), None)
            if other is not None:
                values.append(_value(other))
        # A copy that never saw a batch adds nothing (and a lazily sized part
        # may still have its initial shape there).
        if kind == "sum":
            values = [v for v in values if not _is_empty(v) and numpy.any(v)] or values[:1]
        shapes = {v.shape for v in values}
        if len(shapes) > 1:
            raise ValueError(f"Metric '{getattr(target, 'name', target)}': the replicas' '{key}' have different "
                             f"shapes {sorted(shapes)}; they cannot be combined.")
        if kind == "mean":
            total = sum(values) / len(values)
        elif kind == "only_first_replica":
            total = values[0]
        elif kind == "none":
            continue
        else:
            total = sum(values[1:], values[0])
        _assign(target, key, value, total)
    for key, sub in _sub_metrics(target):
        others = [dict(_sub_metrics(source)).get(key) for source in sources]
        others = [other for other in others if other is not None]
        if sub is None:
            if not others:
                continue
            sub, others = copy.deepcopy(others[0]), others[1:]
            setattr(target, key, sub)
        _combine_into(sub, others)


def _assign(metric, key, current, total):
    if key.startswith("variable:"):
        current.assign(total.astype(current.dtype) if hasattr(total, "astype") else total)
    elif isinstance(current, numpy.ndarray):
        setattr(metric, key, numpy.asarray(total, dtype=current.dtype) if current.size else numpy.asarray(total))
    else:
        setattr(metric, key, float(total))


def combined(copies):
    """A new metric holding the combined state of ``copies`` (one metric's
    copies, one per replica, the same class and configuration)."""
    copies = list(copies)
    merged = copy.deepcopy(copies[0])
    _combine_into(merged, copies[1:])
    return merged


def state_arrays(metric):
    """The state of ``metric`` (and of the metrics it holds) as ``(aggregation,
    float64 array)`` pairs in a fixed order: combined across processes by the
    multi-worker trainer, then put back with :func:`set_state_arrays`."""
    arrays = [(kind, numpy.array(_value(value), dtype=numpy.float64)) for _, kind, value in _parts(metric)
              if kind != "none"]
    for _, sub in _sub_metrics(metric):
        if sub is not None:
            arrays.extend(state_arrays(sub))
    return arrays


def set_state_arrays(metric, arrays):
    """Put :func:`state_arrays`'s arrays (maybe summed) back into ``metric``;
    returns how many it took."""
    taken = 0
    for key, kind, value in _parts(metric):
        if kind == "none":
            continue
        _assign(metric, key, value, arrays[taken])
        taken += 1
    for _, sub in _sub_metrics(metric):
        if sub is not None:
            taken += set_state_arrays(sub, arrays[taken:])
    return taken
