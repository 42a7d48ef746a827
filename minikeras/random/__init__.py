"""``keras.random``: random draws, seeds and the library's random streams.

- ``streams``: one seed for the library (:func:`seed`), one generator per
  device (:func:`generator`) and the host streams (initializers,
  augmentation, ``fit``'s shuffling);
- ``seed_generator``: Keras's :class:`SeedGenerator` and the draws that take
  ``seed=`` (randint, shuffle, dropout, normal, uniform);
- ``distributions``: beta, binomial, categorical, gamma, truncated_normal;
- ``state``: :func:`get_state`/:func:`set_state`, every stream's state for a
  saved model to resume bit for bit.

The kernels that draw inside a captured training step
(``kernels/captured_random.py``, ``kernels/counter_random.py``) keep their
counter-based streams next to the GPU code that runs them.
"""
from minikeras.random.distributions import beta, binomial, categorical, gamma, truncated_normal
from minikeras.random.seed_generator import SeedGenerator, dropout, randint, shuffle, with_seed_argument
from minikeras.random.state import get_state, set_state
from minikeras.random.streams import generator, get_seed, host_generator, host_rng, seed, shuffle_rng
from minikeras.random.streams import normal as _device_normal, uniform as _device_uniform

normal, uniform = with_seed_argument(_device_normal, _device_uniform)  # Keras's seed= argument

__all__ = [
    "SeedGenerator", "beta", "binomial", "categorical", "dropout", "gamma", "generator", "get_seed", "get_state",
    "host_generator", "host_rng", "normal", "randint", "seed", "set_state", "shuffle", "shuffle_rng",
    "truncated_normal", "uniform", "with_seed_argument",
]
