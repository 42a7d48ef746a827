"""Nested structures of lists, tuples and dicts (model inputs, outputs, batches)."""


def flatten(structure):
    """The leaves of ``structure`` in order (dict entries by sorted key)."""
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in flatten(item)]
    if isinstance(structure, dict):
        return [leaf for key in sorted(structure) for leaf in flatten(structure[key])]
    return [structure]


def map_structure(function, structure):
    """``structure`` with every leaf replaced by ``function(leaf)``."""
    if isinstance(structure, (list, tuple)):
        return type(structure)(map_structure(function, item) for item in structure)
    if isinstance(structure, dict):
        return {key: map_structure(function, value) for key, value in structure.items()}
    return function(structure)


def pack_sequence_as(structure, flat):
    """The leaves ``flat`` (in ``flatten`` order) put back into ``structure``'s shape."""
    leaves = iter(flat)

    def build(item):
        if isinstance(item, (list, tuple)):
            return type(item)(build(child) for child in item)
        if isinstance(item, dict):
            return {key: build(item[key]) for key in sorted(item)}
        return next(leaves)

    return build(structure)
