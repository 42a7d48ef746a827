"""ctc_loss and ctc_decode where the Keras-referenced fuzz (issue 36) found
them answering unlike Keras 3.15: a label equal to the blank within the
target's length (Keras's CTC loss pads its labels with the blank 0 and
counts the padding in the length), 16-bit logits, boolean targets and
lengths, and the beam settings of the greedy strategy. Keras's answers
(TensorFlow; torch agrees) are quoted."""
import numpy
import pytest

from minikeras import ops


def _logits():
    return numpy.linspace(-1, 1, 30).astype("float32").reshape(2, 5, 3) ** 3


def _loss(target, mask_index=0, logits=None):
    return ops.ctc_loss(numpy.array(target, "int32"), _logits() if logits is None else logits,
                        numpy.array([2, 2], "int32"), numpy.array([5, 4], "int32"), mask_index=mask_index)


def test_a_blank_label_within_the_length_is_a_symbol_to_emit():
    # The recursion may skip the blank between two labels whenever they differ, even when a label is
    # the blank class itself (TensorFlow, torch): was only when the label was no blank.
    numpy.testing.assert_allclose(_loss([[1, 0], [2, 0]]).numpy(), [2.125, 1.8224202], rtol=1e-5)
    numpy.testing.assert_allclose(_loss([[0, 1], [1, 1]]).numpy(), [2.2795448, 2.8637826], rtol=1e-5)
    numpy.testing.assert_allclose(_loss([[1, 0], [2, 1]], mask_index=1).numpy(), [1.9790413, 1.6784244],
                                  rtol=1e-5)  # torch's answer (TensorFlow reads label 1 as class 0 there)


def test_the_loss_of_16_bit_logits_is_float32():
    logits = numpy.linspace(-1, 1, 30).reshape(2, 5, 3).astype("float16")
    loss = ops.ctc_loss(numpy.array([[1, 2], [1, 2]]), logits, numpy.array([2, 2]), numpy.array([5, 5]))
    assert loss.dtype == numpy.float32  # Keras: result_type(float16, float32); was float16
    numpy.testing.assert_allclose(loss.numpy(), [1.9531, 1.95325], rtol=1e-3)


def test_boolean_targets_are_class_ids_zero_and_one():
    target = numpy.array([[True, False], [True, True]])
    numpy.testing.assert_allclose(ops.ctc_loss(target, _logits(), numpy.array([2, 2]), numpy.array([5, 5])).numpy(),
                                  _loss_of(target.astype("int32")), rtol=1e-6)


def _loss_of(target):
    return ops.ctc_loss(target, _logits(), numpy.array([2, 2]), numpy.array([5, 5])).numpy()


def _uniform():
    return numpy.log(numpy.full((2, 4, 3), 1 / 3, "float32"))


def test_decoding_16_bit_scores_gives_float32_scores():
    decoded, scores = ops.ctc_decode(_uniform().astype("float16"), numpy.array([4, 3], "int32"))
    assert decoded.dtype == numpy.int32 and scores.dtype == numpy.float32  # was float16
    numpy.testing.assert_allclose(scores.numpy().ravel(), [4.39453, 3.2959], rtol=1e-3)


@pytest.mark.parametrize("lengths", [numpy.array([4.0, 3.0], "float64"), numpy.array([4, 3], "float16")])
def test_decoding_lengths_are_cast_to_ints_as_keras_does(lengths):
    _, scores = ops.ctc_decode(_uniform(), lengths)  # was a TypeError
    numpy.testing.assert_allclose(scores.numpy().ravel(), [4.39445, 3.29584], rtol=1e-5)
    _, scores = ops.ctc_decode(_uniform(), numpy.array([True, True]))
    numpy.testing.assert_allclose(scores.numpy().ravel(), [1.09861, 1.09861], rtol=1e-5)


def test_the_greedy_strategy_ignores_the_beam_settings():
    for settings in ({"beam_width": 0}, {"top_paths": 0}):
        _, scores = ops.ctc_decode(_uniform(), numpy.array([4, 3]), strategy="greedy", **settings)
        numpy.testing.assert_allclose(scores.numpy().ravel(), [4.39445, 3.29584], rtol=1e-5)
    with pytest.raises(ValueError, match="beam_width"):
        ops.ctc_decode(_uniform(), numpy.array([4, 3]), strategy="beam_search", beam_width=0)


def test_the_gradient_follows_a_blank_label_within_the_length():
    import minikeras as mk
    from minikeras.autograd import gradcheck

    logits = mk.Tensor(_logits().astype("float64"), requires_grad=True)
    target, lengths = numpy.array([[1, 0], [2, 0]]), numpy.array([2, 2])
    assert gradcheck(lambda x: ops.ctc_loss(target, x, lengths, numpy.array([5, 4])), [logits])
