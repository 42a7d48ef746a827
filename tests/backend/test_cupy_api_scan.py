"""The source scan behind test_cupy_api.py finds the defects it exists for.

Each snippet is a small module written the way library code is; the scan's
findings are then checked against real CuPy exactly as the package is.
"""
import textwrap

import pytest

from tests.backend import cupy_api_scan as scan
from tests.backend import test_cupy_api as api

pytest.importorskip("cupy", reason="cupy-cuda12x is in the test extra")


def _problems(source):
    return api._problems(scan.scan_source(textwrap.dedent(source), "snippet.py"))


def test_catches_normal_on_a_cupy_generator_drawn_through_getattr():
    # The shape of the issue-10 bug: the method name arrives as a parameter.
    problems = _problems("""
        def generator(device):
            return device.xp.random.default_rng(0)

        def _draw(method, shape, device, **kwargs):
            rng = generator(device)
            return getattr(rng, method)(size=shape, **kwargs)

        def normal(shape, mean=0.0, stddev=1.0, device=None):
            return _draw("normal", shape, device, loc=mean, scale=stddev)

        def uniform(shape, minval=0.0, maxval=1.0, device=None):
            return _draw("uniform", shape, device, low=minval, high=maxval)
    """)
    assert ("generator", ("normal",), None) in problems
    assert not any(key[1] == ("uniform",) for key in problems)  # cupy has Generator.uniform(low, high, size)


def test_catches_a_direct_generator_method_and_its_keywords():
    problems = _problems("""
        def draw(xp):
            rng = xp.random.default_rng(1)
            a = rng.normal(size=3)
            b = rng.standard_normal(size=3, dtype="float32")
            c = rng.uniform(low=0, high=1, size=3, endpoint=True)
            return a, b, c
    """)
    assert ("generator", ("normal",), None) in problems
    assert ("generator", ("uniform",), "endpoint") in problems
    assert not any(key[1] == ("standard_normal",) for key in problems)


def test_host_numpy_generators_are_not_device_generators():
    assert not _problems("""
        import numpy
        def shuffle(n):
            rng = numpy.random.default_rng(0)
            return rng.permutation(n), rng.normal(size=n)
    """)


def test_helpers_returning_host_generators_are_host():
    assert not _problems("""
        import numpy
        class Initializer:
            def _generator(self):
                if self.seed is not None:
                    return numpy.random.default_rng(self.seed)
                return random.host_rng()

            def __call__(self, shape):
                generator = self._generator()
                return generator.normal(0.0, 1.0, size=shape)
    """)


def test_helpers_returning_device_generators_are_checked():
    problems = _problems("""
        def _generator_for(seed, target):
            if seed is None:
                return random.generator(target)
            return target.xp.random.default_rng(seed)

        def draw(seed, target):
            rng = _generator_for(seed, target)
            return rng.permutation(10), rng.integers(0, 5, size=3)
    """)
    assert ("generator", ("permutation",), None) in problems
    assert not any(key[1] == ("integers",) for key in problems)


def test_catches_flags_writeable_both_spellings():
    problems = _problems("""
        def assign(value):
            if not value.flags.writeable or not value.flags["WRITEABLE"]:
                value = value.copy()
            return value.flags.c_contiguous
    """)
    assert ("flag", ("writeable",), None) in problems
    assert not any(key[1] == ("c_contiguous",) for key in problems)


def test_catches_missing_module_functions_through_every_spelling():
    problems = _problems("""
        import minikeras.backend as backend
        def f(tensor, x):
            xp = tensor.device.xp
            alias = xp
            a = xp.nanpercentile_nope(x)
            b = tensor.device.xp.linalg.not_a_solver(x)
            c = backend.get_array_module(x).bogus_ufunc(x)
            d = alias.random.not_a_sampler(3)
            e = xp.linalg.norm(x)  # exists
            return a, b, c, d, e
    """)
    assert ("module", ("nanpercentile_nope",), None) in problems
    assert ("module", ("linalg", "not_a_solver"), None) in problems
    assert ("module", ("bogus_ufunc",), None) in problems
    assert ("module", ("random", "not_a_sampler"), None) in problems
    assert ("module", ("linalg", "norm"), None) not in problems


def test_catches_keywords_cupy_rejects():
    problems = _problems("""
        def f(xp, x, mask):
            total = xp.sum(x, axis=0, where=mask)       # numpy only
            fine = xp.sum(x, axis=0, keepdims=True)
            clipped = xp.exp(x, out=x, casting="unsafe")  # a ufunc: keywords from its docstring
            method = x.sum(axis=0, initial=1.0)          # numpy's ndarray method only
            method_ok = x.astype("float32", copy=False)
            return total, fine, clipped, method, method_ok
    """)
    assert ("module", ("sum",), "where") in problems
    assert ("module", ("sum",), "keepdims") not in problems
    assert not any(key[1] == ("exp",) for key in problems)
    assert ("array_method", ("sum",), "initial") in problems
    assert not any(key[1] == ("astype",) for key in problems)


def test_catches_ndarray_attributes_cupy_lacks():
    problems = _problems("""
        def f(x):
            x.setflags(write=False)
            return x.ctypes.data
    """)
    assert ("array_attribute", ("setflags",), None) in problems
    assert ("array_attribute", ("ctypes",), None) in problems


def test_keyword_readers():
    import numpy

    assert {"axis", "where", "initial"} <= scan.accepted_keywords(numpy.ndarray.sum)
    assert scan.accepted_keywords(lambda a, **kwargs: a) is None
    assert scan.accepted_keywords(lambda a, /, b, *, c=1: a) == {"b", "c"}
    with pytest.raises(LookupError):
        scan.accepted_keywords(type("NoSignature", (), {"__call__": None, "__doc__": "no signature here"})())
