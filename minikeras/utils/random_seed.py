"""set_random_seed: one call seeds Python, NumPy and minikeras."""
import random as _python_random

import numpy


def set_random_seed(seed):
    """Seeds Python's ``random``, NumPy's global generator and every minikeras
    device generator, like ``keras.utils.set_random_seed``.

    After it, weight initialisation, dropout masks, ``fit(shuffle=True)`` and
    ``minikeras.random`` draws repeat from run to run.

    Args:
        seed: a non-negative int.

    Raises:
        ValueError: ``seed`` is not a non-negative int.
    """
    from minikeras import random

    if isinstance(seed, bool) or not isinstance(seed, (int, numpy.integer)) or seed < 0:
        raise ValueError(f"set_random_seed expects a non-negative int, received {seed!r}.")
    seed = int(seed)
    _python_random.seed(seed)
    numpy.random.seed(seed % 2**32)
    random.seed(seed)
