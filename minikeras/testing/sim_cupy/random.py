"""``cupy.random`` of the simulated CuPy: ``default_rng`` and its
``Generator``, with CuPy 14.2's methods only (no ``normal``: CuPy's
Generator has none) and CuPy's layout: a ``bit_generator`` holding a
``threading.Lock`` (``lock``) and its state in a device array (``_state``),
as cupy/random/_bit_generator.pyx does, so that code copying a generator
meets what it meets on a GPU.

A draw is one kernel on the current stream (cuRAND's): it reads and
advances the state on the device and writes a new array; in a capture it is
recorded as such, so a replay draws anew from the advanced state.
"""
import threading

import numpy

from minikeras.testing.sim_cupy import _calls, _counting, _races

_METHODS = frozenset(
    "beta binomial chisquare dirichlet exponential f gamma geometric hypergeometric integers logseries poisson "
    "power random standard_exponential standard_gamma standard_normal uniform".split()
)


def _words(state):
    return [state["state"] >> 64, state["state"] & (2**64 - 1), state["inc"] >> 64, state["inc"] & (2**64 - 1)]


class BitGenerator:
    """The cuRAND state of a Generator: ``lock`` and the device array ``_state``."""

    def __init__(self, seed=None):
        self.lock = threading.Lock()
        words = numpy.array(_words(numpy.random.PCG64(seed).state["state"]), dtype=numpy.uint64)
        stream = _calls.stream_for((), "BitGenerator()")
        owners, fresh = {}, []
        self._state, _ = _calls.wrap(words, owners, fresh)
        _races.access(stream, "BitGenerator()", (), (), fresh)


def _draw(state, method, args, kwargs):
    """``method`` of a NumPy generator at the PCG64 ``state`` words (advanced in place)."""
    high_state, low_state, high_inc, low_inc = (int(word) for word in state)
    bits = numpy.random.PCG64()
    bits.state = {"bit_generator": "PCG64", "has_uint32": 0, "uinteger": 0,
                  "state": {"state": (high_state << 64) | low_state, "inc": (high_inc << 64) | low_inc}}
    result = getattr(numpy.random.Generator(bits), method)(*args, **kwargs)
    state[:] = _words(bits.state["state"])
    return numpy.asarray(result)


class Generator:
    """``cupy.random.Generator``: draws of CuPy's methods (module docstring)."""

    def __init__(self, bit_generator):
        self.bit_generator = bit_generator

    def __getattr__(self, name):
        if name not in _METHODS:
            raise AttributeError(f"'cupy.random._generator_api.Generator' object has no attribute {name!r} "
                                 "(simulated CuPy 14.2)")

        def draw(*args, **kwargs):
            state = self.bit_generator._state
            stream = _calls.stream_for((state,), f"Generator.{name}")
            words = state._array
            if stream.capture is not None:  # a capture runs nothing: the state is put back at its end
                stream.capture.check()
                stream.capture.will_write([state._mem])
            owners, fresh = {}, []
            out, host = _calls.wrap(_draw(words, name, args, kwargs), owners, fresh)

            def replay():
                host[...] = _draw(words, name, args, kwargs)

            _calls.issue(stream, f"Generator.{name}", [state._mem], [state._mem], replay, fresh, run=False)
            return out

        return draw


def default_rng(seed=None):
    """``cupy.random.default_rng(seed=None)``."""
    return Generator(BitGenerator(seed))
