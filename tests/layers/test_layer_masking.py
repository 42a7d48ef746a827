"""Masking, and masks flowing from Embedding(mask_zero=True)/Masking through
the layers that pass them on to those that read them (RNNs, Softmax,
GlobalAveragePooling1D), in Sequential and functional models."""
import numpy
import pytest

from minikeras import Model, Sequential, layers
from minikeras.autograd import Tensor
from minikeras.layers import Input
from minikeras.layers.keras_mask import get_keras_mask, set_keras_mask
from tests.layers.layer_check import run_layer_test


def test_masking_layer(rng, tmp_path):
    x = rng.normal(size=(3, 4, 2)).astype("float32")
    x[0, 1] = 0.0
    x[2, 3] = 0.0
    x[1, 2, 0] = 0.0  # one feature at the padding value is not padding
    # Finite differences would step off the padding value, so the gradient
    # (1 on kept steps, 0 on masked ones) is checked directly below.
    layer = run_layer_test(lambda **kw: layers.Masking(**kw), x, expected_output=x, tmp_path=tmp_path,
                           gradient=False)
    expected_mask = numpy.ones((3, 4), bool)
    expected_mask[0, 1] = expected_mask[2, 3] = False
    tensor = Tensor(x, requires_grad=True)
    layer(tensor).sum().backward()
    numpy.testing.assert_array_equal(tensor.grad.numpy(), numpy.repeat(expected_mask[..., None], 2, axis=-1))
    out = layer(x)
    numpy.testing.assert_array_equal(get_keras_mask(out).numpy(), expected_mask)
    y = x + 1.0
    y[1, 1] = 1.0
    out = layers.Masking(mask_value=1.0)(y)
    assert (out.numpy()[1, 1] == 0).all()
    assert not get_keras_mask(out).numpy()[1, 1]
    with pytest.raises(TypeError, match="mask_value"):
        layers.Masking(mask_value="pad")


def test_mask_table_forgets_dead_tensors():
    from minikeras.autograd import keras_mask
    out = layers.Masking()(numpy.zeros((1, 2, 2), "float32"))
    key = id(out)
    assert key in keras_mask._masks
    del out
    assert key not in keras_mask._masks
    set_keras_mask(3.0, numpy.ones(2))  # not weakly referenceable: ignored, no error
    assert get_keras_mask(3.0) is None


@pytest.mark.parametrize("rnn", ["SimpleRNN", "LSTM", "GRU"])
def test_post_padding_is_invisible_to_an_rnn(rnn, rng):
    """Embedding(mask_zero) -> RNN: padded sequences give exactly the
    outputs of the unpadded ones."""
    model = Sequential([Input((6,), dtype="int32"), layers.Embedding(10, 4, mask_zero=True),
                        getattr(layers, rnn)(5)])
    ids = rng.integers(1, 10, (2, 6))
    ids[0, 4:] = 0
    ids[1, 2:] = 0
    padded = model.predict(ids, verbose=0)
    embedding, recurrent = model.layers
    short0 = recurrent(embedding(ids[:1, :4]))
    short1 = recurrent(embedding(ids[1:, :2]))
    numpy.testing.assert_allclose(padded[0], short0.numpy()[0], rtol=1e-5, atol=1e-6)
    numpy.testing.assert_allclose(padded[1], short1.numpy()[0], rtol=1e-5, atol=1e-6)
    # Without the mask the padding does change the result.
    unmasked = Tensor(embedding(ids).numpy())  # same values, no mask attached
    assert not numpy.allclose(recurrent(unmasked).numpy()[1], padded[1], atol=1e-4)


def test_mask_flows_through_dense_and_dropout_in_a_functional_model(rng):
    ids = Input((5,), dtype="int32")
    x = layers.Embedding(8, 3, mask_zero=True)(ids)
    x = layers.Dense(4, activation="tanh")(x)
    x = layers.Dropout(0.5)(x)
    x = layers.LSTM(3, return_sequences=True)(x)
    pooled = layers.GlobalAveragePooling1D()(x)
    model = Model(ids, pooled)
    data = numpy.array([[3, 4, 0, 0, 0], [1, 2, 3, 4, 5]])
    sequences = Model(ids, x).predict(data, verbose=0)
    # Masked steps repeat the last kept output; the pooled mean skips them.
    numpy.testing.assert_allclose(sequences[0, 2:], numpy.repeat(sequences[0, 1:2], 3, axis=0), rtol=1e-6)
    numpy.testing.assert_allclose(model.predict(data, verbose=0)[0], sequences[0, :2].mean(axis=0), rtol=1e-5)
    numpy.testing.assert_allclose(model.predict(data, verbose=0)[1], sequences[1].mean(axis=0), rtol=1e-5)


def test_rnn_return_sequences_passes_the_mask_and_last_output_drops_it(rng):
    ids = numpy.array([[2, 0, 0], [1, 1, 0]])
    embedded = layers.Embedding(4, 2, mask_zero=True)(ids)
    sequences = layers.GRU(3, return_sequences=True)(embedded)
    numpy.testing.assert_array_equal(get_keras_mask(sequences).numpy(), ids != 0)
    assert get_keras_mask(layers.GRU(3)(embedded)) is None
    outputs = layers.LSTM(3, return_sequences=True, return_state=True)(embedded)
    assert get_keras_mask(outputs[0]) is not None and get_keras_mask(outputs[1]) is None


def test_layers_without_mask_support_stop_the_mask():
    embedded = layers.Embedding(4, 2, mask_zero=True)(numpy.array([[2, 0]]))
    assert get_keras_mask(layers.Flatten()(embedded)) is None


def test_rnn_rejects_a_mask_of_the_wrong_shape(rng):
    x = rng.normal(size=(2, 3, 2)).astype("float32")
    with pytest.raises(ValueError, match=r"mask of shape \(batch, timesteps\) = \(2, 3\)"):
        layers.LSTM(2)(x, mask=numpy.ones((2, 4), bool))


def test_losses_skip_masked_timesteps(rng):
    """A sequence output carrying a mask: padded steps do not count in the
    loss (Keras 3 averages over the valid steps only)."""
    from minikeras import losses

    model = Sequential([Input((5,), dtype="int32"), layers.Embedding(6, 4, mask_zero=True),
                        layers.LSTM(3, return_sequences=True), layers.Dense(6)])
    model.compile(optimizer="adam", loss=losses.SparseCategoricalCrossentropy(from_logits=True))
    ids = numpy.array([[1, 2, 3, 0, 0], [4, 5, 1, 2, 0]])
    targets = rng.integers(0, 6, (2, 5))
    logits = model.predict(ids, verbose=0)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - numpy.log(numpy.exp(shifted).sum(axis=-1, keepdims=True))
    per_step = -numpy.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]
    expected = per_step[ids != 0].mean()
    numpy.testing.assert_allclose(model.evaluate(ids, targets, verbose=0), expected, rtol=1e-5)
    # The same loss on an output without a mask averages over every step.
    plain = losses.SparseCategoricalCrossentropy(from_logits=True)(targets, Tensor(logits))
    numpy.testing.assert_allclose(plain.item(), per_step.mean(), rtol=1e-5)


def test_bidirectional_passes_the_mask_on(rng):
    ids = numpy.array([[2, 3, 0, 0], [1, 2, 3, 4]])
    embedded = layers.Embedding(5, 3, mask_zero=True)(ids)
    sequences = layers.Bidirectional(layers.GRU(2, return_sequences=True))(embedded)
    numpy.testing.assert_array_equal(get_keras_mask(sequences).numpy(), ids != 0)
    # Masked steps of a bidirectional sequence are zeros (Keras).
    assert (sequences.numpy()[0, 2:] == 0).all()
    assert get_keras_mask(layers.Bidirectional(layers.GRU(2))(embedded)) is None


def test_time_distributed_keeps_the_mask_for_the_rnn(rng):
    ids = numpy.array([[2, 3, 0, 0], [1, 2, 3, 4]])
    embedding = layers.Embedding(5, 3, mask_zero=True)
    dense = layers.TimeDistributed(layers.Dense(4))
    projected = dense(embedding(ids))
    numpy.testing.assert_array_equal(get_keras_mask(projected).numpy(), ids != 0)
    rnn = layers.SimpleRNN(2)
    padded = rnn(projected).numpy()
    short = rnn(dense(embedding(ids[:1, :2]))).numpy()
    numpy.testing.assert_allclose(padded[0], short[0], rtol=1e-5, atol=1e-6)
