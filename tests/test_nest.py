"""minikeras/_support/nest.py: flatten order and map_structure keeping the containers."""
from minikeras._support.nest import flatten, map_structure


def test_flatten_orders_dict_entries_by_key_and_keeps_list_order():
    assert flatten({"b": [1, (2, 3)], "a": 0}) == [0, 1, 2, 3]
    assert flatten(5) == [5]


def test_map_structure_keeps_container_types():
    result = map_structure(lambda leaf: leaf * 10, {"x": (1, [2]), "y": 3})
    assert result == {"x": (10, [20]), "y": 30}
    assert isinstance(result["x"], tuple) and isinstance(result["x"][1], list)
