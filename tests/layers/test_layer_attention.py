"""Attention and MultiHeadAttention: NumPy references, gradients, masks
(explicit and from Embedding(mask_zero=True)), functional models saved and
loaded, errors. Keras parity is in test_layer_keras_parity.py."""
import numpy
import pytest

from minikeras import Model, layers
from minikeras.autograd import Tensor, gradcheck
from minikeras.layers import Input
from minikeras.layers.keras_mask import get_keras_mask
from minikeras.models import load_model


def np_softmax(x):
    e = numpy.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.fixture
def qvk(rng):
    return (rng.normal(size=(2, 3, 4)).astype("float32"), rng.normal(size=(2, 5, 4)).astype("float32"),
            rng.normal(size=(2, 5, 4)).astype("float32"))


def np_mha(layer, query, value, key, keep=None):
    w = layer.get_weights()
    q = numpy.einsum("btd,dnk->bntk", query, w[0]) + w[1][None, :, None, :]
    k = numpy.einsum("bsd,dnk->bnsk", key, w[2]) + w[3][None, :, None, :]
    v = numpy.einsum("bsd,dnk->bnsk", value, w[4]) + w[5][None, :, None, :]
    scores = numpy.einsum("bntk,bnsk->bnts", q, k) / numpy.sqrt(q.shape[-1])
    if keep is not None:
        scores = numpy.where(keep[:, None], scores, -1e9)
    probs = np_softmax(scores)
    if keep is not None:
        probs = numpy.where(keep[:, None], probs, 0)
    context = numpy.einsum("bnts,bnsk->btnk", probs, v)
    return numpy.einsum("btnk,nko->bto", context, w[6]) + w[7]


def test_attention_matches_numpy_and_gradients(qvk):
    query, value, key = qvk
    layer = layers.Attention()
    out = layer([query, value, key]).numpy()
    expected = np_softmax(query @ key.transpose(0, 2, 1)) @ value
    numpy.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
    layer64 = layers.Attention(use_scale=True, score_mode="concat", dtype="float64")
    tensors = [Tensor(a.astype("float64"), requires_grad=True) for a in qvk]
    assert gradcheck(lambda q, v, k: layer64([q, v, k]), tensors)


def test_attention_masks(qvk):
    query, value, _ = qvk
    value_mask = numpy.array([[1, 1, 0, 0, 0], [1, 1, 1, 1, 1]], bool)
    query_mask = numpy.array([[1, 0, 1], [1, 1, 1]], bool)
    out, weights = layers.Attention()([query, value], mask=[query_mask, value_mask], return_attention_scores=True)
    assert (weights.numpy()[0, :, 2:] == 0).all()
    numpy.testing.assert_allclose(weights.numpy().sum(-1), 1, rtol=1e-6)
    assert (out.numpy()[0, 1] == 0).all()
    numpy.testing.assert_allclose(out.numpy()[0, 0], np_softmax(query[0, 0] @ value[0, :2].T) @ value[0, :2],
                                  rtol=1e-5)
    causal = layers.Attention()([query, query], use_causal_mask=True, return_attention_scores=True)[1].numpy()
    assert (numpy.triu(numpy.ones((3, 3)), 1)[None] * causal == 0).all()
    with pytest.raises(ValueError, match=r"\[query, value\]"):
        layers.Attention()(query)
    with pytest.raises(ValueError, match="score_mode"):
        layers.Attention(score_mode="additive")


def test_mha_matches_numpy_and_gradients(qvk, rng):
    query, value, key = qvk
    layer = layers.MultiHeadAttention(num_heads=2, key_dim=3)
    layer(query, value, key)
    layer.set_weights([rng.normal(0, 0.5, w.shape) for w in layer.weights])
    numpy.testing.assert_allclose(layer(query, value, key).numpy(), np_mha(layer, query, value, key),
                                  rtol=1e-4, atol=1e-5)
    keep = numpy.tril(numpy.ones((2, 3, 5), bool))
    numpy.testing.assert_allclose(layer(query, value, key, attention_mask=keep).numpy(),
                                  np_mha(layer, query, value, key, keep), rtol=1e-4, atol=1e-5)
    layer64 = layers.MultiHeadAttention(num_heads=2, key_dim=2, value_dim=3, dtype="float64")
    layer64(query, value)
    weights = layer64.trainable_weights
    names = ["query_kernel", "query_bias", "key_kernel", "key_bias", "value_kernel", "value_bias", "output_kernel",
             "output_bias"]

    def attend(q, v, *values):
        saved = [getattr(layer64, n) for n in names]
        for n, t in zip(names, values):
            setattr(layer64, n, t)
        try:
            return layer64(q, v, attention_mask=keep)
        finally:
            for n, t in zip(names, saved):
                setattr(layer64, n, t)

    tensors = [Tensor(query.astype("float64"), requires_grad=True), Tensor(value.astype("float64"),
                                                                           requires_grad=True)]
    tensors += [Tensor(w.numpy(), requires_grad=True) for w in weights]
    assert gradcheck(attend, tensors)


def test_mha_takes_masks_from_embedding_and_round_trips(tmp_path):
    ids = Input((6,), dtype="int32")
    embedded = layers.Embedding(10, 8, mask_zero=True)(ids)
    attended = layers.MultiHeadAttention(num_heads=2, key_dim=4)(embedded, embedded)
    model = Model(ids, layers.Dense(1)(layers.GlobalAveragePooling1D()(attended)))
    sequences = Model(ids, attended)
    data = numpy.array([[3, 4, 5, 0, 0, 0], [1, 2, 3, 4, 5, 6]])
    # A sequence padded to 6 attends as the same sequence padded to 4.
    short_ids = Input((4,), dtype="int32")
    short_model = Model(short_ids, model.layers[2](model.layers[1](short_ids), model.layers[1](short_ids)))
    numpy.testing.assert_allclose(sequences.predict(data[:1], verbose=0)[:, :3],
                                  short_model.predict(data[:1, :4], verbose=0)[:, :3], rtol=1e-5, atol=1e-6)
    out = model.predict(data, verbose=0)
    path = str(tmp_path / "mha.h5")
    model.save(path)
    with pytest.warns(UserWarning):
        loaded = load_model(path)
    numpy.testing.assert_allclose(loaded.predict(data, verbose=0), out, rtol=1e-6)
    # The output carries the query's mask, as Keras.
    tokens = layers.Embedding(5, 2, mask_zero=True)(numpy.array([[1, 0]]))
    numpy.testing.assert_array_equal(get_keras_mask(layers.MultiHeadAttention(1, 2)(tokens, tokens)).numpy(),
                                     [[True, False]])


def test_mha_padding_queries_see_only_real_keys(rng):
    embedding = layers.Embedding(10, 6, mask_zero=True)
    mha = layers.MultiHeadAttention(num_heads=2, key_dim=3)
    short = numpy.array([[4, 7, 2]])
    padded = numpy.array([[4, 7, 2, 0, 0]])
    a = mha(embedding(short), embedding(short)).numpy()
    b = mha(embedding(padded), embedding(padded)).numpy()
    numpy.testing.assert_allclose(b[:, :3], a, rtol=1e-5, atol=1e-6)


def test_mha_config_and_errors(qvk):
    query, value, _ = qvk
    layer = layers.MultiHeadAttention(num_heads=2, key_dim=3, value_dim=5, output_shape=7, dropout=0.1)
    assert layer(query, value).shape == (2, 3, 7)
    twin = layers.MultiHeadAttention.from_config(layer.get_config())
    twin(query, value)
    twin.set_weights(layer.get_weights())
    numpy.testing.assert_allclose(twin(query, value).numpy(), layer(query, value).numpy(), rtol=1e-6)
    assert not numpy.allclose(layer(query, value, training=True).numpy(), layer(query, value).numpy())
    with pytest.raises(ValueError, match="num_heads"):
        layers.MultiHeadAttention(0, 3)
    with pytest.raises(ValueError, match="attention over axes"):
        layers.MultiHeadAttention(2, 3, attention_axes=(1, 2))
    with pytest.raises(ValueError, match="built for"):
        layer(query, numpy.zeros((2, 5, 9), "float32"))
    with pytest.raises(ValueError, match="attention_mask of shape"):
        layer(query, value, attention_mask=numpy.ones((2, 3, 4), bool))
    with pytest.raises(ValueError, match=r"\(batch, steps, features\)"):
        layers.MultiHeadAttention(2, 3)(query[0], value[0])
