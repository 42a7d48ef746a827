"""utils.pad_sequences (and preprocessing.sequence.pad_sequences) as in Keras."""
import numpy
import pytest

import minikeras as mk
from minikeras.utils import pad_sequences


def test_defaults_pad_and_truncate_at_the_front():
    out = pad_sequences([[1, 2, 3], [4], []])
    numpy.testing.assert_array_equal(out, [[1, 2, 3], [0, 0, 4], [0, 0, 0]])
    assert out.dtype == numpy.int32


@pytest.mark.parametrize("padding,truncating,expected", [
    ("pre", "pre", [[3, 4, 5], [0, 6, 7]]),
    ("post", "pre", [[3, 4, 5], [6, 7, 0]]),
    ("pre", "post", [[1, 2, 3], [0, 6, 7]]),
    ("post", "post", [[1, 2, 3], [6, 7, 0]]),
])
def test_padding_and_truncating_sides(padding, truncating, expected):
    out = pad_sequences([[1, 2, 3, 4, 5], [6, 7]], maxlen=3, padding=padding, truncating=truncating)
    numpy.testing.assert_array_equal(out, expected)


def test_value_dtype_and_item_shape():
    out = pad_sequences([numpy.ones((2, 3)), numpy.ones((1, 3))], dtype="float32", value=-1.0)
    assert out.shape == (2, 2, 3) and out.dtype == numpy.float32
    numpy.testing.assert_array_equal(out[1, 0], [-1, -1, -1])
    text = pad_sequences([["a"], ["b", "c"]], dtype=object, value="<pad>")
    assert text.tolist() == [["<pad>", "a"], ["b", "c"]]


def test_maxlen_zero_and_old_address():
    assert pad_sequences([[1, 2]], maxlen=0).shape == (1, 0)
    assert mk.preprocessing.sequence.pad_sequences is pad_sequences


@pytest.mark.parametrize("call, message", [
    (lambda: pad_sequences([[1]], padding="middle"), "padding"),
    (lambda: pad_sequences([[1]], truncating="x"), "truncating"),
    (lambda: pad_sequences([[1]], maxlen=-1), "maxlen"),
    (lambda: pad_sequences(5), "list of sequences"),
    (lambda: pad_sequences([[1], 2]), "sequence 1"),
    (lambda: pad_sequences([[1]], value="x"), "string"),
    (lambda: pad_sequences([numpy.ones((1, 2)), numpy.ones((1, 3))]), "shape"),
])
def test_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(1, 1000), max_size=12), max_size=8),
       st.one_of(st.none(), st.integers(0, 15)), st.sampled_from(["pre", "post"]), st.sampled_from(["pre", "post"]))
def test_rows_are_the_kept_part_plus_padding(sequences, maxlen, padding, truncating):
    out = pad_sequences(sequences, maxlen=maxlen, padding=padding, truncating=truncating, value=0)
    length = max((len(s) for s in sequences), default=0) if maxlen is None else maxlen
    assert out.shape == (len(sequences), length)
    for row, sequence in zip(out, sequences):
        kept = (sequence[-length:] if truncating == "pre" else sequence[:length]) if length else []
        pad = [0] * (length - len(kept))
        assert row.tolist() == (pad + kept if padding == "pre" else kept + pad)
