"""The simulated GPU wraps out-of-range integer indices where CuPy 14.2 wraps
them, and raises where CuPy raises (minikeras/testing/sim_cupy/_indexing.py).

Each case runs on the simulated GPU in every run, and on CuPy itself where a
real GPU is visible (``cuda`` marker: the same assertions, so the model
cannot drift from CuPy unnoticed once a GPU run sees it).
"""
import importlib.util
import pathlib

import numpy
import pytest

_A = numpy.arange(6, dtype=numpy.float32).reshape(2, 3)  # [[0, 1, 2], [3, 4, 5]]
_R = numpy.arange(3, dtype=numpy.float32)


def _ids(*values):
    return numpy.array(values, dtype=numpy.int64)


def _set(xp, put, key, value):
    target = put(_A)
    target[key(put)] = value
    return target


def _at(xp, put, name, ids):
    target = put(_R)
    getattr(xp, name).at(target, put(_ids(*ids)), put(numpy.ones(len(ids), numpy.float32)))
    return target


def _put(xp, put, **options):
    target = put(_R)
    xp.put(target, put(_ids(4, -4)), put(numpy.array([7.0, 8.0], numpy.float32)), **options)
    return target


def _put_method(xp, put):
    target = put(_R)
    target.put(put(_ids(3)), put(numpy.array([9.0], numpy.float32)))
    return target


def _put_along_axis(xp, put):
    target = put(_A)
    xp.put_along_axis(target, put(_ids(3, 4).reshape(1, 2)), 9.0, axis=1)
    return target


# name -> (call(xp, put), the result CuPy computes)
WRAPPED = {
    "one_array": (lambda xp, put: put(_R)[put(_ids(3, -4, 7))], [0.0, 2.0, 1.0]),
    "a_list": (lambda xp, put: put(_R)[[3, 5]], [0.0, 2.0]),
    "a_host_array": (lambda xp, put: put(_R)[_ids(4)], [1.0]),
    "second_axis": (lambda xp, put: put(_A)[:, put(_ids(4))], [[1.0], [4.0]]),
    "after_an_ellipsis": (lambda xp, put: put(_A)[..., put(_ids(-4))], [[2.0], [5.0]]),
    "each_array_its_axis": (lambda xp, put: put(_A)[put(_ids(2, 3)), put(_ids(3, 5))], [0.0, 5.0]),
    "with_a_scalar_in_range": (lambda xp, put: put(_A)[1, put(_ids(3))], [3.0]),
    "setitem": (lambda xp, put: _set(xp, put, lambda put: (put(_ids(2)), put(_ids(4))), 9.0),
                [[0.0, 9.0, 2.0], [3.0, 4.0, 5.0]]),
    "add_at": (lambda xp, put: _at(xp, put, "add", [3, 3, 5]), [2.0, 1.0, 3.0]),
    "maximum_at": (lambda xp, put: _at(xp, put, "maximum", [3]), [1.0, 1.0, 2.0]),
    "take": (lambda xp, put: xp.take(put(_A), put(_ids(3, -4)), axis=1), [[0.0, 2.0], [3.0, 5.0]]),
    "take_flat": (lambda xp, put: xp.take(put(_A), put(_ids(7))), [1.0]),
    "take_scalar": (lambda xp, put: xp.take(put(_R), 4), 1.0),
    "take_method": (lambda xp, put: put(_A).take(put(_ids(2)), axis=0), [[0.0, 1.0, 2.0]]),
    "take_along_axis": (lambda xp, put: xp.take_along_axis(put(_A), put(_ids(3, 5).reshape(1, 2)), axis=1),
                        [[0.0, 2.0], [3.0, 5.0]]),
    "put_along_axis": (_put_along_axis, [[9.0, 9.0, 2.0], [9.0, 9.0, 5.0]]),
    "put_wraps_by_default": (_put, [0.0, 7.0, 8.0]),
    "put_method": (_put_method, [9.0, 1.0, 2.0]),
    "compress_with_a_longer_condition": (
        lambda xp, put: xp.compress(put(numpy.array([False, False, False, True])), put(_R)), [0.0]),
    "ravel_multi_index": (lambda xp, put: xp.ravel_multi_index((put(_ids(2)), put(_ids(4))), (2, 3)), [1]),
}

# name -> (call(xp, put), (error class, message regex)): CuPy checks these, as NumPy does.
RAISED = {
    "scalar_index": (lambda xp, put: put(_R)[3], (IndexError, r"out of bounds")),
    "numpy_scalar_index": (lambda xp, put: put(_A)[numpy.int64(-3)], (IndexError, r"out of bounds")),
    "an_empty_axis": (lambda xp, put: put(numpy.zeros((0,), numpy.float32))[put(_ids(0))], (IndexError, r".")),
    "put_in_raise_mode": (lambda xp, put: _put(xp, put, mode="raise"), (IndexError, r".")),
    "choose": (lambda xp, put: xp.choose(put(_ids(0, 2, 1)), put(numpy.stack([_R, _R]))),
               (ValueError, r"invalid entry in choice array")),
    "unravel_index": (lambda xp, put: xp.unravel_index(put(_ids(6)), (2, 3)), (ValueError, r".")),
}


def _check_wrapped(name, xp, put, host):
    call, expected = WRAPPED[name]
    numpy.testing.assert_array_equal(numpy.asarray(host(call(xp, put))), expected)


def _check_raised(name, xp, put):
    call, (error, message) = RAISED[name]
    with pytest.raises(error, match=message):
        call(xp, put)


def test_an_index_past_the_end_picks_the_first_element(simulated_gpu):
    """The brief's example: ``xp.arange(3)[xp.asarray([3])]`` is element 0."""
    with simulated_gpu.activate():
        xp = simulated_gpu.xp
        assert simulated_gpu.to_host(xp.arange(3)[xp.asarray([3])]).tolist() == [0]


@pytest.mark.parametrize("name", sorted(WRAPPED))
def test_the_simulated_gpu_wraps_as_cupy_wraps(name, simulated_gpu):
    with simulated_gpu.activate():
        _check_wrapped(name, simulated_gpu.xp, simulated_gpu.asarray, simulated_gpu.to_host)


@pytest.mark.parametrize("name", sorted(RAISED))
def test_the_simulated_gpu_raises_where_cupy_checks(name, simulated_gpu):
    with simulated_gpu.activate():
        _check_raised(name, simulated_gpu.xp, simulated_gpu.asarray)


def test_numpy_raises_in_every_wrapped_case():
    """What the model changes: NumPy itself raises (or, for ravel_multi_index,
    refuses) in each case the simulated GPU wraps."""
    for name in sorted(WRAPPED):
        with pytest.raises((IndexError, ValueError)):
            WRAPPED[name][0](numpy, numpy.asarray)


@pytest.mark.cuda
@pytest.mark.parametrize("name", sorted(WRAPPED))
def test_cupy_wraps_as_the_model_says(name):
    import cupy

    _check_wrapped(name, cupy, cupy.asarray, cupy.asnumpy)


@pytest.mark.cuda
@pytest.mark.parametrize("name", sorted(RAISED))
def test_cupy_raises_as_the_model_says(name):
    import cupy

    _check_raised(name, cupy, cupy.asarray)


def test_the_installed_cupy_sources_say_the_same():
    """CuPy's Python sources name the wrapping defaults: ``put`` and
    ``ravel_multi_index`` default to ``mode='wrap'``, ``take`` has no mode
    and ``take_along_axis`` is fancy indexing."""
    spec = importlib.util.find_spec("cupy")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("CuPy is not installed")
    root = pathlib.Path(list(spec.submodule_search_locations)[0]) / "_indexing"
    assert "def put(a, ind, v, mode='wrap'):" in (root / "insert.py").read_text()
    assert "def ravel_multi_index(multi_index, dims, mode='wrap', order='C'):" in (root / "generate.py").read_text()
    indexing = (root / "indexing.py").read_text()
    assert "def take(a, indices, axis=None, out=None):" in indexing
    assert "return a[tuple(fancy_index)]" in indexing
