"""minikeras.data.Dataset: tf.data's methods with tf.data's semantics.

The expected values are what tf.data (TensorFlow 2.21) gives for the same
pipelines; the last tests compare with tf.data live when TensorFlow is
installed."""
import threading
import warnings

import numpy
import pytest

import minikeras as mk
from minikeras.data import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset


def _ints(dataset):
    return [element.tolist() for element in dataset.as_numpy_iterator()]


def test_batch_unbatch_take_skip_repeat_filter_concatenate_zip():
    numbers = Dataset.range(10)
    assert _ints(numbers.batch(4)) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert _ints(numbers.batch(4, drop_remainder=True)) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert _ints(numbers.batch(4).unbatch()) == list(range(10))
    assert _ints(numbers.skip(3).take(4)) == [3, 4, 5, 6]
    assert _ints(numbers.take(3).repeat(2)) == [0, 1, 2, 0, 1, 2]
    assert _ints(numbers.filter(lambda x: x % 3 == 0)) == [0, 3, 6, 9]
    assert _ints(numbers.take(2).concatenate(numbers.skip(8))) == [0, 1, 8, 9]
    assert _ints(numbers.take(-1)) == list(range(10)) and _ints(numbers.skip(-1)) == []
    assert [(a, b) for a, b in Dataset.zip((numbers.take(3), numbers.skip(5))).as_numpy_iterator()] == \
        [(0, 5), (1, 6), (2, 7)]
    assert _ints(numbers.repeat().take(12))[10:] == [0, 1]
    assert numbers.apply(lambda ds: ds.take(2)).cardinality() == 2


def test_cardinality_and_len_as_tf_data():
    numbers = Dataset.range(10)
    assert [int(ds.cardinality()) for ds in (
        numbers.batch(4), numbers.batch(4, drop_remainder=True), numbers.repeat(), numbers.filter(lambda x: True),
        numbers.take(3), numbers.skip(20), numbers.repeat().take(5), numbers.concatenate(numbers),
        numbers.shuffle(3), numbers.repeat(3), numbers.map(lambda x: x).prefetch(AUTOTUNE).cache())] == \
        [3, 2, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, 3, 0, 5, 20, 10, 30, 10]
    assert numbers.cardinality().numpy() == 10 and numbers.cardinality().numpy().dtype == numpy.int64
    assert len(numbers.batch(3)) == 4
    with pytest.raises(TypeError, match="The dataset is infinite."):
        len(numbers.repeat())
    with pytest.raises(TypeError, match="The dataset length is unknown."):
        len(numbers.filter(lambda x: True))
    assert AUTOTUNE == -1 and mk.data.experimental.AUTOTUNE == -1
    assert mk.data.experimental.cardinality(numbers.take(4)) == 4


def test_map_unpacks_tuples_and_types_python_values_as_tf_does():
    pairs = Dataset.from_tensor_slices((numpy.arange(4.0), numpy.array([0, 1, 0, 1])))
    doubled = pairs.map(lambda x, y: (x * 2, y))
    assert [(float(x), int(y)) for x, y in doubled] == [(0.0, 0), (2.0, 1), (4.0, 0), (6.0, 1)]
    batch = next(iter(Dataset.range(5).map(lambda x: {"a": x, "b": 1.5, "c": 1, "d": True}).batch(5)))
    assert {key: value.dtype.name for key, value in batch.items()} == \
        {"a": "int64", "b": "float32", "c": "int32", "d": "bool"}
    # A minikeras op in the function runs on the CPU (tf.data's pipelines do) and comes out as NumPy.
    devices = []

    def scale(x):
        out = mk.ops.multiply(mk.ops.convert_to_tensor(x), 2.0)
        devices.append(out.device.name)
        return out

    assert _ints(Dataset.from_tensor_slices(numpy.arange(3.0)).map(scale)) == [0.0, 2.0, 4.0]
    assert set(devices) == {"cpu:0"}
    with pytest.raises(TypeError, match="Dataset.map expects arrays, tensors, numbers or strings"):
        list(Dataset.range(2).map(lambda x: object()))


def test_iteration_yields_arrays_with_tf_numpy_method():
    texts = Dataset.from_tensor_slices(["great film", "awful"]).batch(2)
    text_batch = next(iter(texts))
    assert text_batch.numpy()[0] == "great film" and type(text_batch.numpy()) is numpy.ndarray
    assert list(texts.as_numpy_iterator())[0].tolist() == [b"great film", b"awful"]  # tf's bytes
    assert [x for x in Dataset.range(2).as_numpy_iterator()] == [0, 1]
    assert isinstance(next(Dataset.range(2).as_numpy_iterator()), numpy.int64)


def test_parallel_map_keeps_order_and_runs_calls_at_once():
    meeting = threading.Barrier(2, timeout=10)  # passes only when two calls run at the same time

    def slow_square(x):
        if 1 <= int(x) <= 2:
            meeting.wait()
        return x * x

    squares = Dataset.range(8).map(slow_square, num_parallel_calls=2)
    assert _ints(squares) == [x * x for x in range(8)]
    assert _ints(Dataset.range(20).map(lambda x: x + 1, num_parallel_calls=AUTOTUNE)) == list(range(1, 21))


def test_shuffle_reshuffles_each_iteration_within_its_buffer():
    shuffled = Dataset.range(50).shuffle(50, seed=3)
    first, second = _ints(shuffled), _ints(shuffled)
    assert sorted(first) == list(range(50)) and sorted(second) == list(range(50)) and first != second
    assert _ints(Dataset.range(50).shuffle(50, seed=3)) == first  # a seed repeats the orders
    fixed = Dataset.range(50).shuffle(50, reshuffle_each_iteration=False)
    assert _ints(fixed) == _ints(fixed)
    assert _ints(Dataset.range(20).shuffle(1)) == list(range(20))  # a buffer of one changes nothing
    local = _ints(Dataset.range(100).shuffle(5, seed=0))
    # An element can only leave the buffer after the ones 5 places ahead of it have entered.
    assert all(value < position + 5 for position, value in enumerate(local)) and local != list(range(100))
    mk.utils.set_random_seed(7)
    unseeded_first = _ints(Dataset.range(30).shuffle(30))
    mk.utils.set_random_seed(7)
    assert _ints(Dataset.range(30).shuffle(30)) == unseeded_first


def test_cache_replays_after_one_complete_pass():
    calls = []
    cached = Dataset.range(6).map(lambda x: calls.append(int(x)) or x * 10).cache()
    assert _ints(cached) == [0, 10, 20, 30, 40, 50] and len(calls) == 6
    assert _ints(cached) == [0, 10, 20, 30, 40, 50] and len(calls) == 6  # not recomputed
    element = next(iter(cached))
    with pytest.raises(ValueError, match="read-only"):
        element[...] = 1  # the cache cannot be changed through what it replays
    partial_calls = []
    partial = Dataset.range(6).map(lambda x: partial_calls.append(1) or x).cache()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert _ints(partial.take(2)) == [0, 1]
    assert "partially cached contents of the dataset will be discarded" in str(caught[0].message)
    assert _ints(partial) == list(range(6)) and len(partial_calls) == 8  # the partial pass was not kept


def test_cache_to_a_file_is_read_by_a_later_pipeline(tmp_path):
    calls = []
    texts = numpy.array(["a", "bb", "ccc"], dtype=object)

    def source():
        return Dataset.from_tensor_slices((numpy.arange(3.0), texts)).map(
            lambda x, t: calls.append(1) or {"x": x, "text": t, "pair": (x, 2)})

    first = list(source().cache(str(tmp_path / "pipeline")).as_numpy_iterator())
    assert len(calls) == 3 and (tmp_path / "pipeline.npz").is_file()
    again = list(source().cache(str(tmp_path / "pipeline")).as_numpy_iterator())
    assert len(calls) == 3  # read from the file, the source never ran
    assert [(e["x"], e["text"], e["pair"]) for e in again] == [(e["x"], e["text"], e["pair"]) for e in first] == \
        [(0.0, b"a", (0.0, 2)), (1.0, b"bb", (1.0, 2)), (2.0, b"ccc", (2.0, 2))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        list(source().cache(str(tmp_path / "partial")).take(1))
    assert not list(tmp_path.glob("partial*"))  # an interrupted pass leaves no file


def test_prefetch_produces_in_a_bounded_background_thread():
    produced = []
    consumer = threading.current_thread().name

    def record(x):
        produced.append(threading.current_thread().name)
        return x

    def producers():
        return {thread for thread in threading.enumerate() if thread.name == "minikeras-data-prefetch"}

    before = producers()
    pipeline = Dataset.range(100).map(record).prefetch(2)
    iterator = iter(pipeline)
    assert int(next(iterator)) == 0
    for _ in range(300):  # give the producer time to run ahead as far as it may
        if len(produced) >= 4:
            break
        threading.Event().wait(0.01)
    assert 2 <= len(produced) <= 5  # the one consumed, two waiting, one blocked on the full queue (+1 race)
    assert consumer not in produced and all(name == "minikeras-data-prefetch" for name in produced)
    iterator.close()  # stopping early stops the producer
    assert producers() <= before
    assert _ints(Dataset.range(5).prefetch(AUTOTUNE)) == list(range(5))


def test_errors_reach_the_consumer_and_arguments_are_checked():
    def fail(x):
        if int(x) == 3:
            raise KeyError("bad element 3")
        return x

    with pytest.raises(KeyError, match="bad element 3"):
        list(Dataset.range(5).map(fail).prefetch(AUTOTUNE))
    with pytest.raises(KeyError, match="bad element 3"):
        list(Dataset.range(5).map(fail, num_parallel_calls=2))
    with pytest.raises(ValueError, match="Dataset.batch batch_size expects an int of at least 1, received 0"):
        Dataset.range(3).batch(0)
    with pytest.raises(TypeError, match="Dataset.map expects a callable"):
        Dataset.range(3).map(3)
    with pytest.raises(ValueError, match="num_parallel_calls"):
        Dataset.range(3).map(lambda x: x, num_parallel_calls=0)
    with pytest.raises(ValueError, match="Dataset.take count"):
        Dataset.range(3).take("2")
    with pytest.raises(TypeError, match="scalar bool"):
        list(Dataset.range(3).filter(lambda x: numpy.array([True, False])))
    with pytest.raises(ValueError, match="different shapes in component 0"):
        list(Dataset.from_tensor_slices(numpy.zeros((2, 3))).map(lambda x: x[: 1 + int(x.sum())]).concatenate(
            Dataset.from_tensor_slices(numpy.ones((1, 3)))).batch(3))
    with pytest.raises(ValueError, match="same size along its first axis"):
        Dataset.from_tensor_slices((numpy.zeros(3), numpy.zeros(4)))
    with pytest.raises(ValueError, match="batch axis"):
        list(Dataset.range(3).unbatch())


def test_same_elements_as_tf_data_live():
    tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed (comparison only)")
    x, y = numpy.arange(12.0).reshape(6, 2), numpy.arange(6)

    def pipelines(module):
        data = module.data.Dataset
        base = data.from_tensor_slices((x, y))
        return [
            base.batch(4), base.batch(4).unbatch().batch(5, drop_remainder=True), base.skip(2).take(3).repeat(2),
            base.filter(lambda a, b: b % 2 == 0), base.map(lambda a, b: {"a": a * 2, "b": b}).batch(3),
            base.take(2).concatenate(base.skip(5)), data.zip((base.take(2), data.range(7, 9))),
        ]

    for ours, theirs in zip(pipelines(mk), pipelines(tf)):
        assert int(ours.cardinality()) == int(theirs.cardinality())
        mine, reference = list(ours.as_numpy_iterator()), list(theirs.as_numpy_iterator())
        assert len(mine) == len(reference)
        for got, expected in zip(mine, reference):
            mk.tree.map_structure(numpy.testing.assert_array_equal, got, expected)
    assert mk.data.AUTOTUNE == tf.data.AUTOTUNE
    assert mk.data.INFINITE_CARDINALITY == tf.data.INFINITE_CARDINALITY
