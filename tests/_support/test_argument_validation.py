"""The shared argument checks (minikeras/_support/argument_validation.py)."""
import math

import numpy
import pytest

import minikeras as mk
from minikeras._support import argument_validation as av


@pytest.mark.parametrize("value, kind", [
    (numpy.array(["a", "b"]), "string"),
    (numpy.array([1.0, None], dtype=object), "object"),
    (numpy.array([b"x"]), "bytes"),
    (numpy.array(["2020-01-01"], dtype="datetime64[D]"), "datetime"),
])
def test_non_numeric_arrays_are_refused_naming_the_entry(value, kind):
    with pytest.raises(TypeError, match=f"relu: expected numeric data .* {kind}"):
        av.validate_tensor_input("relu", value)


def test_none_and_other_types_are_refused():
    with pytest.raises(TypeError, match="exp: expected a Tensor, an array or a number, received None"):
        av.validate_tensor_input("exp", None)
    with pytest.raises(TypeError, match="exp: .*received a list .*minikeras.tensor"):
        av.validate_tensor_input("exp", [1.0])
    with pytest.raises(TypeError, match="exp: .*received dict"):
        av.validate_tensor_input("exp", {})
    assert av.validate_tensor_input("exp", [1.0, 2.0], allow_sequence=True) == [1.0, 2.0]
    with pytest.raises(TypeError, match="exp: .*string"):
        av.validate_tensor_input("exp", ["a"], allow_sequence=True)


def test_bool_and_complex_policies():
    with pytest.raises(TypeError, match="negative does not accept bool"):
        av.validate_tensor_input("negative", numpy.array([True]), allow_bool=False)
    with pytest.raises(TypeError, match="negative does not accept bool"):
        av.validate_tensor_input("negative", True, allow_bool=False)
    with pytest.raises(TypeError, match="var does not support complex"):
        av.validate_tensor_input("var", mk.tensor(numpy.array([1j])), allow_complex=False)
    with pytest.raises(TypeError, match="var does not support complex"):
        av.validate_tensor_input("var", 1j, allow_complex=False)
    assert av.validate_tensor_input("add", numpy.array([True])) is not None


def test_ints_shapes_tuples_and_numbers():
    assert av.validate_int("op", "k", numpy.int64(3), minimum=1) == 3
    with pytest.raises(TypeError, match="op: k must be an int, received float 1.5"):
        av.validate_int("op", "k", 1.5)
    with pytest.raises(TypeError, match="must be an int, received bool"):
        av.validate_int("op", "k", True)
    with pytest.raises(ValueError, match="op: k must be positive, received 0"):
        av.validate_int("op", "k", 0, minimum=1)
    with pytest.raises(ValueError, match="must be <= 4"):
        av.validate_int("op", "k", 5, maximum=4)
    assert av.validate_shape("zeros", (2, numpy.int32(3))) == (2, 3)
    assert av.validate_shape("zeros", 4) == (4,)
    with pytest.raises(TypeError, match=r"zeros: shape must hold ints, received \(1.9, 2\)"):
        av.validate_shape("zeros", (1.9, 2))
    with pytest.raises(ValueError, match="non-negative"):
        av.validate_shape("zeros", (2, -1))
    assert av.standardize_tuple("conv", "strides", 2, 2) == (2, 2)
    with pytest.raises(ValueError, match="conv: strides must be an int or a tuple of 2 ints"):
        av.standardize_tuple("conv", "strides", (1, 2, 3), 2)
    with pytest.raises(ValueError, match="positive"):
        av.standardize_tuple("conv", "strides", (0, 1), 2)
    assert av.standardize_padding("conv", "SAME") == "same"
    with pytest.raises(ValueError, match="conv: padding must be 'valid' or 'same', received 'full'"):
        av.standardize_padding("conv", "full")
    assert av.validate_number("sgd", "learning_rate", numpy.float32(0.5)) == 0.5
    for bad, error in ((math.inf, ValueError), (math.nan, ValueError), (None, TypeError), ("1", TypeError),
                       (True, TypeError)):
        with pytest.raises(error, match="sgd: learning_rate"):
            av.validate_number("sgd", "learning_rate", bad)


def test_entry_point_names_the_entry_once():
    with pytest.raises(ValueError, match=r"^MeanSquaredError 'mse': mean: cannot average"):
        with av.entry_point("MeanSquaredError", "mse"):
            mk.ops.mean(numpy.zeros((2, 0), "float32"), axis=-1)
    with pytest.raises(ValueError, match="^Inner: mean: cannot average"):  # the innermost entry, once
        with av.entry_point("Outer"):
            with av.entry_point("Inner"):
                mk.ops.mean(numpy.zeros((2, 0), "float32"), axis=-1)


def test_entry_point_leaves_raw_errors_alone():
    # A NumPy error is not relabelled as if it were a library check, so the
    # fuzz run still counts it as a leak.
    with pytest.raises(ValueError) as caught:
        with av.entry_point("Outer"):
            numpy.zeros(3).reshape(2, 2)
    assert not str(caught.value).startswith("Outer")


def test_standardize_tuple_keeps_plain_answers_and_still_checks_the_rest():
    from minikeras._support.argument_validation import standardize_tuple

    first = standardize_tuple("conv2d", "strides", (2, 1), 2)
    assert first == (2, 1) and standardize_tuple("conv2d", "strides", (2, 1), 2) is first  # kept
    assert standardize_tuple("conv2d", "strides", 3, 2) == (3, 3)
    # (True, 1) == (2 - 1, 1) as a dict key: a bool is refused however many plain tuples were kept before.
    standardize_tuple("conv2d", "strides", (1, 1), 2)
    with pytest.raises(ValueError, match="strides must be an int or a tuple of 2 ints, received"):
        standardize_tuple("conv2d", "strides", (True, 1), 2)
    assert standardize_tuple("conv2d", "strides", [2, 1], 2) == (2, 1)  # lists are checked each time
    with pytest.raises(ValueError, match="must be positive"):
        standardize_tuple("conv2d", "strides", (0, 1), 2)
    with pytest.raises(ValueError, match="must be positive"):  # a failure is not kept
        standardize_tuple("conv2d", "strides", (0, 1), 2)
    assert standardize_tuple("conv2d", "padding", (0, 1), 2, allow_zero=True) == (0, 1)
