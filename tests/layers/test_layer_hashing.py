"""Hashing, HashedCrossing and the lookups' hashed OOV buckets: the string
hashes against TensorFlow's values, config and save round trips, refusals.
(Forward parity with Keras is in test_layer_more_blocks.py's cases.)"""
import numpy
import pytest

import minikeras as mk
from minikeras import layers
from tests.layers.keras_more_blocks_cases import FIXTURE

def test_string_hashes_match_tensorflow_on_every_length_class():
    """FarmHash Fingerprint64 and SipHash-2-4 against values TensorFlow gave
    (``to_hash_bucket_fast`` / ``to_hash_bucket_strong`` with 2**62 + 12345
    buckets, so nearly every bit is compared), recorded in the fixture."""
    from minikeras._support.string_hash import hash_bucket
    from tests.layers.keras_more_blocks_cases import HASH_STRINGS

    with numpy.load(FIXTURE) as data:
        fast, strong = data["hash/fast"], data["hash/strong"]
    buckets = (1 << 62) + 12345
    assert [hash_bucket(s, buckets) for s in HASH_STRINGS] == fast.tolist()
    assert [hash_bucket(s, buckets, (133, 2**63 - 5)) for s in HASH_STRINGS] == strong.tolist()


@pytest.mark.filterwarnings("ignore:No training configuration")
def test_hashing_config_and_model_save_round_trip(tmp_path):
    words = numpy.array([["cat"], ["dog"], [""], ["bird"]])
    layer = layers.Hashing(7, mask_value="", salt=(3, 4), output_mode="multi_hot")
    expected = layer(words).numpy()
    assert expected.shape == (4, 7) and expected.dtype == numpy.float32
    assert expected[2, 0] == 1 and expected[:, 0].sum() == 1  # only the mask value goes to bin 0
    clone = layers.Hashing.from_config(layer.get_config())
    numpy.testing.assert_array_equal(clone(words).numpy(), expected)
    model = mk.Sequential([layers.Hashing(5, salt=11), layers.Embedding(5, 2)])
    ids = numpy.array([[1, 2, 3], [4, 5, 6]])
    before = model(ids).numpy()
    for name in ("model.keras", "model.h5"):
        model.save(tmp_path / name)
        numpy.testing.assert_array_equal(mk.models.load_model(tmp_path / name)(ids).numpy(), before)
    assert layers.Hashing(3).compute_output_shape((None, 4)) == (None, 4)
    assert layers.Hashing(3, output_mode="count").compute_output_shape((None, 4)) == (None, 3)


def test_hashing_bad_arguments_are_refused_clearly():
    with pytest.raises(ValueError, match="num_bins"):
        layers.Hashing(0)
    with pytest.raises(ValueError, match="output_mode"):
        layers.Hashing(3, output_mode="tf_idf")
    with pytest.raises(ValueError, match="salt"):
        layers.Hashing(3, salt=(1, 2, 3))
    with pytest.raises(ValueError, match="dtype"):
        layers.Hashing(3, dtype="float32")
    with pytest.raises(ValueError, match="sparse"):
        layers.Hashing(3, output_mode="count", sparse=True)
    with pytest.raises(TypeError, match="Hashing expects strings or numbers"):
        layers.Hashing(3)(numpy.array([[None]], dtype=object))


@pytest.mark.filterwarnings("ignore:No training configuration")
def test_hashed_crossing_config_save_and_shapes(tmp_path):
    layer = layers.HashedCrossing(num_bins=5)
    first, second = numpy.array([1, 2, 3]), numpy.array(["a", "b", "a"])
    bins = layer([first, second]).numpy()
    assert bins.shape == (3,) and bins.dtype == numpy.int64 and bins.min() >= 0 and bins.max() < 5
    assert layer([numpy.array(1), numpy.array("a")]).numpy() == bins[0]  # scalars cross as one sample
    config = layer.get_config()
    assert set(config) == {"num_bins", "output_mode", "sparse", "name", "dtype"}  # Keras's keys, no "trainable"
    clone = layers.HashedCrossing.from_config(config)
    numpy.testing.assert_array_equal(clone([first, second]).numpy(), bins)
    one_hot = layers.HashedCrossing(5, output_mode="one_hot")
    assert one_hot.compute_output_shape([(3, 1), (3, 1)]) == (3, 5)
    numpy.testing.assert_array_equal(one_hot([first[:, None], second[:, None]]).numpy().argmax(-1), bins)
    inputs = [layers.Input((1,), dtype="int64"), layers.Input((1,), dtype="int64")]
    model = mk.Model(inputs, layers.HashedCrossing(6, output_mode="one_hot")(inputs))
    ids = [numpy.array([[1], [2]]), numpy.array([[3], [4]])]
    before = model(ids).numpy()
    model.save(tmp_path / "crossing.keras")
    numpy.testing.assert_array_equal(mk.models.load_model(tmp_path / "crossing.keras")(ids).numpy(), before)


def test_hashed_crossing_bad_inputs_are_refused_clearly():
    layer = layers.HashedCrossing(3)
    with pytest.raises(ValueError, match="list or tuple"):
        layer(numpy.array([1, 2]))
    with pytest.raises(ValueError, match="at least two"):
        layer([numpy.array([1, 2])])
    with pytest.raises(ValueError, match="equal shape"):
        layer([numpy.array([1, 2]), numpy.array([1, 2, 3])])
    with pytest.raises(ValueError, match=r"\(batch_size, 1\)"):
        layer([numpy.ones((2, 2), "int64"), numpy.ones((2, 2), "int64")])
    with pytest.raises(ValueError, match="integer or string"):
        layer([numpy.array([1.5, 2.0]), numpy.array([1, 2])])
    with pytest.raises(ValueError, match="output_mode"):
        layers.HashedCrossing(3, output_mode="multi_hot")
    with pytest.raises(ValueError, match="num_bins"):
        layers.HashedCrossing(0)


def test_lookup_oov_hashing_round_trips_and_refusals(tmp_path):
    words = numpy.array([["cat", "fish", "emu", "yak"]])
    layer = layers.StringLookup(vocabulary=["cat", "dog"], num_oov_indices=3, salt=4)
    ids = layer(words).numpy()
    assert ids[0, 0] == 3 and all(0 <= i < 3 for i in ids[0, 1:])  # OOV tokens spread over the 3 buckets
    numpy.testing.assert_array_equal(layers.StringLookup.from_config(layer.get_config())(words).numpy(), ids)
    with pytest.raises(ValueError, match="salt"):
        layers.IntegerLookup(vocabulary=[1], num_oov_indices=2, salt=3)  # salt needs oov_method="farmhash"
    with pytest.raises(ValueError, match="oov_method"):
        layers.IntegerLookup(oov_method="md5")
    with pytest.raises(ValueError, match="salt"):
        layers.StringLookup(salt="pepper")
