"""Text that is not valid UTF-8 (bytes) or not valid Unicode (lone
surrogates) reaching the text layers: out-of-vocabulary tokens and hashes
at call time, as in Keras, never a UnicodeDecodeError in the middle of a
batch; a vocabulary that could not be saved is refused when it is set."""
import numpy
import pytest

import minikeras as mk
from minikeras import layers
from minikeras._support.string_hash import hash_bucket

MALFORMED = [b"\xff", b"ab\xc3", b"\xed\xa0\x80"]  # a stray byte, a cut sequence, an encoded surrogate


def test_string_lookup_maps_malformed_bytes_to_the_oov_index():
    lookup = layers.StringLookup(vocabulary=["a", "b"])
    assert lookup(numpy.array([b"\xff"])).numpy().tolist() == [0]
    tokens = numpy.array(MALFORMED + [b"a", b"b"], dtype=object)
    assert lookup(tokens).numpy().tolist() == [0, 0, 0, 1, 2]
    # Several OOV buckets: a malformed token hashes into one of them like any other.
    buckets = layers.StringLookup(vocabulary=["a"], num_oov_indices=3)(numpy.array(MALFORMED)).numpy()
    assert set(buckets.tolist()) <= {0, 1, 2}
    inverse = layers.StringLookup(vocabulary=["a"], output_mode="multi_hot")(numpy.array([[b"\xff", b"a"]]))
    assert inverse.numpy().tolist() == [[1.0, 1.0]]


def test_text_vectorization_reads_malformed_bytes_as_oov_tokens():
    vectorizer = layers.TextVectorization(vocabulary=["a", "b"])
    assert vectorizer(numpy.array([b"\xff a b\xc3"])).numpy().tolist() == [[1, 2, 1]]
    counts = layers.TextVectorization(vocabulary=["a"], output_mode="count")(numpy.array([b"a \xff \xfe"]))
    assert counts.numpy().tolist() == [[2.0, 1.0]]


def test_hashing_hashes_the_bytes_themselves_as_tensorflow_does():
    values = numpy.array(MALFORMED + ["café".encode()], dtype=object)
    bins = layers.Hashing(num_bins=1000)(values).numpy().tolist()
    assert bins == [hash_bucket(value, 1000) for value in MALFORMED] + [hash_bucket("café", 1000)]
    assert bins[0] != hash_bucket("\ufffd", 1000)  # the raw byte, not a replacement character
    masked = layers.Hashing(num_bins=3, mask_value="")(numpy.array([b"", b"\xff"])).numpy().tolist()
    assert masked[0] == 0 and masked[1] in (1, 2)
    crossed = layers.HashedCrossing(num_bins=5)([numpy.array([b"\xff", b"a"]), numpy.array([1, 2])])
    assert crossed.shape == (2,) and set(crossed.numpy().tolist()) <= set(range(5))


def test_lone_surrogates_in_inputs_are_oov_and_hash():
    assert layers.StringLookup(vocabulary=["a"])(numpy.array(["\ud800", "a"])).numpy().tolist() == [0, 1]
    assert layers.StringLookup(vocabulary=["a"], num_oov_indices=2)(numpy.array(["\udcff"])).numpy()[0] in (0, 1)
    assert layers.Hashing(num_bins=4)(numpy.array(["\ud800"])).numpy()[0] in range(4)


@pytest.mark.parametrize("make", [
    lambda: layers.StringLookup(vocabulary=["a", "\ud800"]),
    lambda: layers.StringLookup(vocabulary=["a"], oov_token="\udcff"),
    lambda: layers.StringLookup(mask_token="x\udfff"),
    lambda: layers.StringLookup().set_vocabulary(["ok", "b\ud83d"]),
    lambda: layers.TextVectorization(vocabulary=["a", "\ud800"]),
], ids=["vocabulary", "oov_token", "mask_token", "set_vocabulary", "text_vectorization"])
def test_a_vocabulary_with_a_lone_surrogate_is_refused_when_set(make):
    with pytest.raises(ValueError, match="lone surrogate, which UTF-8 cannot encode"):
        make()


def test_a_vocabulary_adapted_from_malformed_bytes_saves_and_loads(tmp_path):
    lookup = layers.StringLookup()
    lookup.adapt(numpy.array([b"\xff", b"a", b"\xfe", b"a", b"a"]))
    assert lookup.get_vocabulary() == ["[UNK]", "a", "\ufffd"]
    model = mk.Sequential([layers.Input((1,), dtype="string"), lookup])
    model.save(tmp_path / "lookup.keras")
    loaded = mk.models.load_model(tmp_path / "lookup.keras")
    tokens = numpy.array([[b"a"], [b"\xfd"], [b"zz"]])
    assert loaded.predict(tokens, verbose=0).tolist() == model.predict(tokens, verbose=0).tolist() == [[1], [2], [0]]
