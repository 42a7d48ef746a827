"""Indexing (``Tensor.__getitem__`` / ``ops.getitem``): NumPy semantics, and
gradients that accumulate where an element is picked more than once."""
import numpy
import pytest

import minikeras as mk
from minikeras import ops
from minikeras.autograd import gradcheck
from tests.ops.op_check import check_op

X = numpy.random.default_rng(0).standard_normal((4, 3, 5))

INDEXES = {
    "int": 1,
    "negative int": (-1, 2),
    "element": (3, 2, 4),
    "slice": slice(1, 3),
    "negative step": (slice(None, None, -1), slice(None, None, -2)),
    "negative bounds": (slice(-1, 0, -2), slice(None), slice(-3, None)),
    "empty slice": slice(3, 1),
    "none and ellipsis": (None, Ellipsis, 1, None),
    "ellipsis middle": (0, Ellipsis, slice(1, 4)),
    "int list": [0, 2, 3],
    "repeated ints": [1, 1, 1, 0],
    "negative int list": [-1, 0, -1],
    "2-d int array": numpy.array([[0, 3], [3, 3]]),
    "int array on axis 1": (slice(None), [2, 0, 2]),
    "two int arrays": ([0, 0, 3], slice(None), [4, 4, 0]),
    "separated int arrays": ([1, 1], 0, [2, 2]),
    "ints with None and step": (None, [3, 3], slice(None, None, -1), Ellipsis),
    "ellipsis then ints": (Ellipsis, [4, 4, 1]),
    "boolean mask": numpy.array([True, False, True, True]),
    "boolean mask 2-d": (X[:, :, 0] > 0),
    "mask and slice": (slice(None), numpy.array([True, False, True]), slice(None, 2)),
    "empty list": [],
}


@pytest.mark.parametrize("index", list(INDEXES.values()), ids=list(INDEXES))
def test_getitem_matches_numpy_and_gradcheck(index):
    check_op(lambda t: t[index], lambda a: a[index], [X])


def test_int_tensor_index_and_tensor_mask():
    rows = mk.tensor(numpy.array([2, 2, 0]))
    check_op(lambda t: t[rows, 1], lambda a: a[[2, 2, 0], 1], [X])
    t = mk.tensor(X)
    numpy.testing.assert_array_equal(t[t > 0].numpy(), X[X > 0])


def test_repeated_indices_accumulate():
    t = mk.Tensor(numpy.arange(5.0), requires_grad=True)
    t[[4, 4, 4, 0, -1]].sum().backward()
    numpy.testing.assert_array_equal(t.grad.numpy(), [1, 0, 0, 0, 4])


def test_repeated_pairs_accumulate_in_mixed_indexing():
    t = mk.Tensor(numpy.zeros((3, 4)), requires_grad=True)
    t[[1, 1, 2], [0, 0, 3]].backward(numpy.array([1.0, 2.0, 5.0]))
    expected = numpy.zeros((3, 4))
    expected[1, 0], expected[2, 3] = 3.0, 5.0
    numpy.testing.assert_array_equal(t.grad.numpy(), expected)


def test_basic_index_gradient_is_placed_at_the_view():
    t = mk.Tensor(numpy.zeros((2, 6), dtype="float32"), requires_grad=True)
    t[1, ::-2].backward(numpy.array([1.0, 2.0, 3.0], dtype="float32"))
    assert t.grad.dtype == numpy.float32
    numpy.testing.assert_array_equal(t.grad.numpy(), [[0, 0, 0, 0, 0, 0], [0, 3, 0, 2, 0, 1]])


def test_element_is_a_zero_dim_tensor():
    t = mk.tensor(X.astype("float32"))
    item = t[1, 2, 3]
    assert item.shape == () and item.dtype == numpy.float32
    assert item.item() == pytest.approx(float(X[1, 2, 3]))


def test_chained_indexing_gradcheck():
    assert gradcheck(lambda t: t[::-1][[0, 0, 2]][:, 1:][..., [1, 1]], [X])


def test_out_of_range_index_names_the_shape():
    t = mk.tensor(X)
    with pytest.raises(IndexError, match=r"index 4 is out of range for axis 0 of size 4 \(tensor shape \(4, 3, 5\)\)"):
        t[4]
    with pytest.raises(IndexError, match=r"index -4 is out of range for axis 1 of size 3"):
        t[:, -4]
    with pytest.raises(IndexError, match=r"index 5 is out of range for axis 2 of size 5"):
        t[..., [0, 5]]
    with pytest.raises(IndexError, match=r"index -5 is out of range for axis 0"):
        t[mk.tensor(numpy.array([-5, 1]))]


def test_bad_indexes():
    t = mk.tensor(X)
    with pytest.raises(IndexError, match=r"too many indices \(4\) for a tensor of shape \(4, 3, 5\)"):
        t[0, 0, 0, 0]
    with pytest.raises(IndexError, match="single Ellipsis"):
        t[..., 0, ...]
    with pytest.raises(IndexError, match=r"boolean mask of shape \(3,\) does not match axes \(4,\)"):
        t[numpy.array([True, False, True])]
    with pytest.raises(TypeError, match="integer or boolean, received dtype float64"):
        t[numpy.array([0.0, 1.0])]
    with pytest.raises(TypeError, match="getitem: index items must be"):
        t["a"]
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        t[::0]
