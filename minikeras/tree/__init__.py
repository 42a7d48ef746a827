"""``keras.tree``: flatten, map and rebuild nested structures of lists,
tuples, namedtuples, deques and dicts, with Keras 3's rules (dicts by
sorted key, ``None`` a leaf; see `minikeras._support.nest`).

Example:
    >>> from minikeras import tree
    >>> tree.flatten({"b": [1, 2], "a": 0})
    [0, 1, 2]
    >>> tree.map_structure(lambda x: x * 10, {"b": [1, 2], "a": 0})
    {'b': [10, 20], 'a': 0}
"""
from minikeras._support.nest import (  # noqa: F401
    MAP_TO_NONE, assert_same_paths, assert_same_structure, flatten, flatten_with_path, is_nested, lists_to_tuples,
    map_shape_structure, map_structure, map_structure_up_to, pack_sequence_as, traverse,
)

__all__ = ["MAP_TO_NONE", "assert_same_paths", "assert_same_structure", "flatten", "flatten_with_path", "is_nested",
           "lists_to_tuples", "map_shape_structure", "map_structure", "map_structure_up_to", "pack_sequence_as",
           "traverse"]
