"""minikeras.tree against Keras 3's keras.tree: the docstring examples, and
the answers Keras 3.15 gives on one mixed structure (recorded below; the
last test compares live when Keras is installed)."""
import collections
import warnings

import numpy
import pytest

import minikeras as mk
from minikeras import tree

Point = collections.namedtuple("Point", "b a")


def _mixed():
    return {"b": [1, (2, None)], "a": Point(3, {"z": 4, "y": 5}),
            "c": collections.OrderedDict([("q", 6), ("p", 7)])}


def test_keras_docstring_examples():
    assert tree.flatten([[1, 2, 3], [4, [5], [[6]]]]) == [1, 2, 3, 4, 5, 6]
    assert tree.flatten(None) == [None] and tree.flatten(1) == [1]
    assert tree.flatten({100: "world!", 6: "Hello"}) == ["Hello", "world!"]
    assert tree.flatten_with_path([{"foo": 42}]) == [((0, "foo"), 42)]
    structure = [[1], [2], [3]]
    assert tree.map_structure(lambda v: v ** 2, structure) == [[1], [4], [9]]
    assert tree.map_structure(lambda x, y: x * y, structure, structure) == [[1], [4], [9]]
    assert tree.map_structure(lambda v: v * 2, Point(a=1, b=2)) == Point(a=2, b=4)
    assert tree.map_structure_up_to([None, None], len, [[1, 1], [2, 2]]) == [2, 2]
    assert tree.map_structure_up_to([None, [None, None]], str, [[1, 1], [2, 2]]) == ["[1, 1]", ["2", "2"]]
    packed = tree.pack_sequence_as({"key3": "", "key1": "", "key2": ""}, ["value1", "value2", "value3"])
    assert packed == {"key3": "value3", "key1": "value1", "key2": "value2"} and list(packed) == ["key3", "key1", "key2"]
    assert tree.pack_sequence_as((("a", "b"), ("c", "d", "e"), "f"), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]) == \
        ((1.0, 2.0), (3.0, 4.0, 5.0), 6.0)
    tree.assert_same_structure([(0, 1)], [(2, 3)])
    tree.assert_same_paths([0, 1], (2, 3))
    AlsoPoint = collections.namedtuple("Point", "b a")
    with pytest.raises(ValueError, match="same nested structure"):
        tree.assert_same_structure(Point(0, 1), AlsoPoint(2, 3))
    tree.assert_same_paths(Point(0, 1), AlsoPoint(2, 3))


def test_mixed_structure_as_keras_3_15_answers():
    # Keras 3.15.1 (TensorFlow backend) printed these for _mixed().
    assert tree.flatten(_mixed()) == [3, 5, 4, 1, 2, None, 6, 7]
    assert tree.flatten_with_path(_mixed()) == [
        (("a", 0), 3), (("a", 1, "y"), 5), (("a", 1, "z"), 4), (("b", 0), 1), (("b", 1, 0), 2), (("b", 1, 1), None),
        (("c", "q"), 6), (("c", "p"), 7)]
    mapped = tree.map_structure(lambda x: None if x is None else x * 10, _mixed())
    assert mapped == {"b": [10, (20, None)], "a": Point(b=30, a={"z": 40, "y": 50}),
                      "c": collections.OrderedDict([("q", 60), ("p", 70)])}
    assert type(mapped["a"]) is Point and type(mapped["c"]) is collections.OrderedDict
    assert list(mapped) == ["b", "a", "c"]  # a rebuilt dict keeps the input's order
    assert tree.pack_sequence_as({"b": 0, "a": [0, 0]}, [1, 2, 3]) == {"b": 3, "a": [1, 2]}
    assert tree.lists_to_tuples([1, [2, {"a": [3]}]]) == (1, (2, {"a": (3,)}))
    assert tree.map_structure_up_to([0, 0], lambda a, b: (a, b), [[1, 2], 3], [4, 5]) == [([1, 2], 4), (3, 5)]
    shapes = {"a": (2, 3), "b": [None, 4], "c": [(1,), (2, None)]}
    assert tree.map_shape_structure(lambda shape: ("shape", shape), shapes) == \
        {"a": ("shape", (2, 3)), "b": ("shape", [None, 4]), "c": [("shape", (1,)), ("shape", (2, None))]}
    assert tree.map_structure(lambda x: x, collections.defaultdict(int, {"b": 1, "a": 2})).default_factory is int
    assert tree.map_structure(lambda x: 1, [None]) == [1]
    assert tree.map_structure(lambda x: 1, [None, 2], none_is_leaf=False) == [None, 1]


def test_is_nested_and_leaves():
    assert tree.is_nested([1]) and tree.is_nested({}) and tree.is_nested(()) and tree.is_nested(Point(1, 2))
    for leaf in (1, numpy.zeros(2), "ab", None, {1, 2}, mk.tensor([1.0])):
        assert not tree.is_nested(leaf)
        assert tree.flatten(leaf) == [leaf]
    assert tree.flatten([[]]) == [] and tree.map_structure(lambda x: x, ()) == ()


def test_traverse_top_down_bottom_up_and_map_to_none():
    assert tree.traverse(lambda x: None, [1, [2, 3]]) == [1, [2, 3]]
    assert tree.traverse(lambda x: x * 2 if isinstance(x, int) else None, [1, [2, 3]], top_down=False) == [2, [4, 6]]
    assert tree.traverse(lambda x: tree.MAP_TO_NONE if x == 2 else None, [1, [2, 3]]) == [1, [None, 3]]
    # Top down, a replaced subtree is not visited further.
    seen = []
    result = tree.traverse(lambda x: seen.append(x) or ("cut" if x == [2, 3] else None), [1, [2, 3]])
    assert result == [1, "cut"] and seen == [[1, [2, 3]], 1, [2, 3]]
    with pytest.raises(TypeError, match="callable"):
        tree.traverse(3, [1])


def test_mismatches_raise_value_errors():
    for first, second in [([1, 2], [1]), ([1], (1,)), ({"a": 1}, {"b": 1}), ([1, [2]], [1, 2]),
                          (Point(1, 2), (1, 2))]:
        with pytest.raises(ValueError, match="same nested structure"):
            tree.assert_same_structure(first, second)
    with pytest.raises(ValueError, match="same nested structure"):
        tree.map_structure(lambda a, b: a, [1, 2], [1])
    with pytest.raises(ValueError, match="too few leaves"):
        tree.pack_sequence_as([0, 0], [1])
    with pytest.raises(ValueError, match="too many leaves"):
        tree.pack_sequence_as([0, 0], [1, 2, 3])
    with pytest.raises(ValueError, match=r"Paths in `a` missing in `b`:\n\{\('a',\)\}"):
        tree.assert_same_paths({"a": 1}, {"a": [2]})
    with pytest.raises(ValueError, match="at least one structure"):
        tree.map_structure(len)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tree.assert_same_structure([1], [2], check_types=False)
    assert "assert_same_paths" in str(caught[0].message) and caught[0].category is DeprecationWarning
    tree.assert_same_structure({"a": 1}, collections.OrderedDict(a=2))  # dict kinds are interchangeable


def test_same_answers_as_keras_live():
    keras = pytest.importorskip("keras", reason="Keras 3 is not installed (comparison only)")
    cases = [
        lambda t: t.flatten(_mixed()), lambda t: t.flatten_with_path(_mixed()),
        lambda t: t.map_structure(lambda x: (x, "leaf"), _mixed()),
        lambda t: t.lists_to_tuples({"a": [1, [2]], "b": (3, [4])}),
        lambda t: t.map_shape_structure(lambda s: len(s), {"a": (2, 3), "b": [[None, 4], (5,)]}),
        lambda t: t.traverse(lambda x: x + 1 if isinstance(x, int) else None, [1, (2, {"k": 3})], top_down=False),
        lambda t: t.pack_sequence_as(_mixed(), list(range(8))),
        lambda t: t.map_structure_up_to({"x": 0, "y": [0, 0]}, repr, {"x": [1, 2], "y": [(3,), {"q": 4}]}),
        lambda t: [t.is_nested(v) for v in ([], {}, None, "s", numpy.zeros(1), Point(1, 2))],
    ]
    for case in cases:
        assert case(tree) == case(keras.tree)
    assert sorted(tree.__all__) == sorted(name for name in dir(keras.tree) if not name.startswith("_"))
