"""Ids out of range get the op's own error on every device.

CuPy wraps an out-of-range integer-array index silently where NumPy raises
(the simulated CuPy wraps too: minikeras/testing/sim_cupy/_indexing.py), so each op
that takes ids from the user reads their bounds back and raises itself.
These tests run on the CPU and on the (simulated) GPU alike.
"""
import numpy
import pytest

import minikeras as mk
from minikeras import losses, ops

_X = numpy.arange(6, dtype="float32").reshape(2, 3)


@pytest.mark.parametrize("reduction", [None, "add", "max", "min", "mul"])
def test_scatter_update_names_the_axis_an_index_leaves(reduction):
    with pytest.raises(IndexError, match=r"^scatter_update: indices must address the first 1 axes of shape "
                                         r"\(2, 3\); received index 2 for axis 0 of size 2\.$"):
        ops.scatter_update(_X, numpy.array([[2]]), numpy.ones((1, 3), "float32"), reduction=reduction)
    with pytest.raises(IndexError, match=r"received index -3 for axis 0 of size 2"):
        ops.scatter_update(_X, numpy.array([[-3]]), numpy.ones((1, 3), "float32"), reduction=reduction)


def test_a_component_past_its_axis_is_refused_not_moved_to_another_row():
    # (0, 4) flattens to row-major position 4 of 6, in range: without the check
    # per component it silently landed at (1, 1), even on NumPy.
    with pytest.raises(IndexError, match=r"^scatter: .* received index 4 for axis 1 of size 3\.$"):
        ops.scatter(numpy.array([[0, 4]]), numpy.ones(1, "float32"), (2, 3))
    with pytest.raises(IndexError, match=r"^scatter_update: .* received index 4 for axis 1 of size 3\.$"):
        ops.scatter_update(_X, numpy.array([[0, 4]]), numpy.ones(1, "float32"))


def test_ids_in_range_negative_ones_included_still_work():
    out = ops.scatter_update(_X, numpy.array([[-1, -1], [0, 0]]), numpy.array([10.0, 20.0], "float32"))
    numpy.testing.assert_array_equal(out.numpy(), [[20, 1, 2], [3, 4, 10]])
    numpy.testing.assert_array_equal(ops.scatter(numpy.array([[1], [-1]]), numpy.ones(2, "float32"), (2,)).numpy(),
                                     [0, 2])


def test_in_top_k_refuses_targets_outside_the_classes():
    with pytest.raises(IndexError, match=r"^in_top_k: targets must be class ids in \[0, 3\) for predictions of "
                                         r"shape \(2, 3\), received target 3\.$"):
        ops.in_top_k(numpy.array([0, 3]), _X, 1)
    with pytest.raises(IndexError, match=r"received target -1\."):
        ops.in_top_k(numpy.array([-1, 0]), _X, 1)
    numpy.testing.assert_array_equal(ops.in_top_k(numpy.array([2, 0]), _X, 1).numpy(), [True, False])


def _ctc_inputs():
    logits = numpy.zeros((2, 5, 4), "float32")
    return logits, numpy.array([[1, 2], [3, 0]]), numpy.array([2, 1]), numpy.array([5, 5])


def test_ctc_loss_refuses_labels_outside_the_classes():
    logits, labels, label_length, logit_length = _ctc_inputs()
    labels[0, 1] = 4
    with pytest.raises(ValueError, match=r"^ctc_loss: labels must be class ids in \[0, 4\) for output with 4 "
                                         r"classes; received label 4\.$"):
        ops.ctc_loss(labels, logits, label_length, logit_length)
    with pytest.raises(ValueError, match=r"^ctc_loss: .* received label 9\.$"):
        losses.ctc(numpy.array([[1, 9]]), logits[:1])


def test_ctc_loss_never_reads_the_padding_past_a_length():
    logits, labels, label_length, logit_length = _ctc_inputs()
    expected = ops.ctc_loss(labels, logits, label_length, logit_length).numpy()
    labels[1, 1] = 99  # past the second sample's length (1): padding
    numpy.testing.assert_allclose(ops.ctc_loss(labels, logits, label_length, logit_length).numpy(), expected)


def test_take_and_getitem_refuse_ids_past_the_axis():
    with pytest.raises(IndexError, match=r"^take: getitem: index 3 is out of range for axis 1 of size 3"):
        ops.take(_X, numpy.array([0, 3]), axis=1)
    with pytest.raises(IndexError, match=r"^getitem: index -3 is out of range for axis 0 of size 2"):
        mk.tensor(_X)[numpy.array([-3])]
    with pytest.raises(IndexError, match=r"^take_along_axis: indices must be in \[-3, 3\)"):
        ops.take_along_axis(_X, numpy.array([[0], [-4]]), axis=1)


def test_bincount_gives_one_message_for_a_negative_value_on_every_device():
    with pytest.raises(ValueError, match=r"^bincount: x must hold non-negative integers, received -2\.$"):
        ops.bincount(numpy.array([0, -2, 1]))
    numpy.testing.assert_array_equal(ops.bincount(numpy.array([0, 2, 2])).numpy(), [1, 0, 2])
