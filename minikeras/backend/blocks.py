"""Pure helpers for work split into blocks (no threads here).

How blocks are run is the device's business (``Device.parallel_blocks``,
``Device.row_blocks``); these two say how to cut the work and how to add
the blocks' results up so that the sum does not depend on how the blocks
were spread over threads.
"""


def even_slices(total, count):
    """At most ``count`` slices splitting ``range(total)`` evenly (none empty)."""
    step = max(1, -(-total // max(count, 1)))
    return [slice(start, min(total, start + step)) for start in range(0, total, step)]


def sum_in_order(xp, parts, shape=None, dtype=None):
    """The sum of per-block results in block order, so that it has the same
    bits however the blocks were spread over threads; ``zeros(shape, dtype)``
    when there are none; a single part is returned as it is (no copy, no
    kernel launch on a GPU). The other parts are left unchanged."""
    if not parts:
        return xp.zeros(shape, dtype)
    if len(parts) == 1:
        return parts[0]
    total = parts[0].copy()
    for part in parts[1:]:
        total += part
    return total
