"""Nested structures of lists, tuples and dicts (model inputs, outputs,
batches), with the semantics of Keras 3's ``keras.tree`` (which
``minikeras.tree`` exports).

The rules are optree's as Keras configures it:

- nodes are ``list``, ``tuple``, namedtuples, ``collections.deque`` and
  dicts (``dict``, ``OrderedDict``, ``defaultdict``); everything else is a
  leaf, ``None`` included (``map_structure(..., none_is_leaf=False)`` makes
  ``None`` an empty node instead);
- a dict's entries are visited in sorted key order (an ``OrderedDict``'s in
  its own order); a rebuilt dict keeps the original's insertion order;
- two structures match when every node has the same type (``list`` and
  ``tuple`` differ, two namedtuple classes differ, the three dict types are
  interchangeable), the same length and the same keys.
"""
import collections
import warnings

_SEQUENCES = (list, tuple, collections.deque)


class MAP_TO_NONE:  # noqa: N801  (Keras's name)
    """Returned by a ``traverse`` function to put ``None`` in place of a subtree."""


def _is_node(value, none_is_leaf=True):
    if isinstance(value, (list, tuple, dict, collections.deque)):
        return True
    return value is None and not none_is_leaf


def _keys(mapping):
    """A dict's keys in visiting order: sorted, or the OrderedDict's own order."""
    if isinstance(mapping, collections.OrderedDict):
        return list(mapping)
    try:
        return sorted(mapping)
    except TypeError:  # keys that do not sort (Keras does not support them): their own order
        return list(mapping)


def _children(node):
    """``[(path key, child), ...]`` of a node, in visiting order."""
    if isinstance(node, dict):
        return [(key, node[key]) for key in _keys(node)]
    if node is None:
        return []
    return list(enumerate(node))


def _rebuild(node, children):
    """A node of ``node``'s type holding ``children`` (in visiting order)."""
    if node is None:
        return None
    if isinstance(node, dict):
        values = dict(zip(_keys(node), children))
        items = [(key, values[key]) for key in node]  # the original insertion order
        if isinstance(node, collections.defaultdict):
            return collections.defaultdict(node.default_factory, items)
        if type(node) in (dict, collections.OrderedDict):
            return type(node)(items)
        try:
            return type(node)(items)
        except TypeError:
            return dict(items)
    if isinstance(node, tuple) and hasattr(type(node), "_fields"):
        return type(node)(*children)
    if isinstance(node, collections.deque):
        return collections.deque(children, maxlen=node.maxlen)
    if type(node) in (list, tuple):
        return type(node)(children)
    try:
        return type(node)(children)
    except TypeError:  # a list/tuple subclass with its own constructor
        return list(children) if isinstance(node, list) else tuple(children)


def _describe(value):
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _node_kind(node):
    """What two matching nodes must share: dicts match dicts, other nodes their exact type."""
    return dict if isinstance(node, dict) else type(node)


def _check_same_node(first, other):
    """ValueError unless ``other`` is a node matching ``first`` (a node)."""
    if not _is_node(other) or _node_kind(first) is not _node_kind(other):
        raise ValueError(f"The structures don't have the same nested structure: expected an instance of "
                         f"{_node_kind(first).__name__}, received {_describe(other)}.")
    if isinstance(first, dict):
        if set(first) != set(other):
            raise ValueError(f"The structures don't have the same nested structure: dictionary keys "
                             f"{sorted(map(str, first))} against {sorted(map(str, other))}.")
    elif len(first) != len(other):
        raise ValueError(f"The structures don't have the same nested structure: a {type(first).__name__} of "
                         f"{len(first)} items against {_describe(other)}.")


def _matching_children(node, other):
    """``other``'s children in the order of ``node``'s (dicts by ``node``'s keys)."""
    if isinstance(node, dict):
        return [other[key] for key in _keys(node)]
    return list(other)


def is_nested(structure):
    """True for a list, tuple, namedtuple, deque or dict; False for a leaf."""
    return _is_node(structure)


def flatten(structure):
    """The leaves of ``structure`` in order (dict entries by sorted key, an
    OrderedDict's in its order); a leaf gives ``[leaf]``."""
    leaves = []
    _flatten_into(structure, leaves, True)
    return leaves


def _flatten_into(value, leaves, none_is_leaf):
    if isinstance(value, _SEQUENCES):
        for item in value:
            _flatten_into(item, leaves, none_is_leaf)
    elif isinstance(value, dict):
        for key in _keys(value):
            _flatten_into(value[key], leaves, none_is_leaf)
    elif value is not None or none_is_leaf:
        leaves.append(value)


def flatten_with_path(structure):
    """``[(path, leaf), ...]``: each leaf with the tuple of indices and keys
    that leads to it (a namedtuple's by index)."""
    pairs = []

    def visit(value, path):
        if _is_node(value):
            for key, child in _children(value):
                visit(child, path + (key,))
        else:
            pairs.append((path, value))

    visit(structure, ())
    return pairs


def map_structure(func, *structures, none_is_leaf=True):
    """``structures[0]`` with every leaf replaced by ``func(*leaves)``, the
    leaves taken at the same place in every structure.

    Args:
        func: called with one leaf of each structure.
        *structures: structures of the same layout (``assert_same_structure``).
        none_is_leaf: with False, ``None`` leaves are kept as ``None`` and
            not passed to ``func``.

    Raises:
        ValueError: no structure, or structures of different layouts.
    """
    if not structures:
        raise ValueError("map_structure expects at least one structure, received none.")
    if not callable(func):
        raise TypeError(f"map_structure expects a callable func, received {_describe(func)}.")

    def build(first, others):
        if not _is_node(first, none_is_leaf):
            for other in others:
                if _is_node(other, none_is_leaf):
                    raise ValueError(f"The structures don't have the same nested structure: a leaf "
                                     f"{_describe(first)} against {_describe(other)}.")
            return func(first, *others)
        if first is None:
            return None
        for other in others:
            _check_same_node(first, other)
        columns = [_matching_children(first, other) for other in others]
        children = [build(child, [column[index] for column in columns])
                    for index, (_, child) in enumerate(_children(first))]
        return _rebuild(first, children)

    if len(structures) == 1:
        return _map_one(func, structures[0], none_is_leaf)
    return build(structures[0], structures[1:])


def _map_one(func, structure, none_is_leaf=True):
    # The common case (one structure, lists/tuples/dicts) without the checks.
    if type(structure) in (list, tuple):
        return type(structure)([_map_one(func, item, none_is_leaf) for item in structure])
    if type(structure) is dict:
        return {key: _map_one(func, value, none_is_leaf) for key, value in structure.items()}
    if _is_node(structure, none_is_leaf):
        if structure is None:
            return None
        return _rebuild(structure, [_map_one(func, child, none_is_leaf) for _, child in _children(structure)])
    return func(structure)


def map_structure_up_to(shallow_structure, func, *structures):
    """``func`` applied where ``shallow_structure`` has its leaves: to the
    whole subtrees of ``structures`` found there (which may be nested
    deeper). The result has ``shallow_structure``'s layout.

    Raises:
        ValueError: no structure, or one that is shallower than
            ``shallow_structure`` or laid out differently above its leaves.
    """
    if not structures:
        raise ValueError("map_structure_up_to expects at least one structure, received none.")

    def build(shallow, subtrees):
        if not _is_node(shallow):
            return func(*subtrees)
        for subtree in subtrees:
            _check_same_node(shallow, subtree)
        columns = [_matching_children(shallow, subtree) for subtree in subtrees]
        children = [build(child, [column[index] for column in columns])
                    for index, (_, child) in enumerate(_children(shallow))]
        return _rebuild(shallow, children)

    return build(shallow_structure, structures)


def assert_same_structure(a, b, check_types=None):
    """Raise ValueError unless ``a`` and ``b`` are nested the same way (the
    module docstring's rule). ``check_types`` is deprecated and ignored, as
    in Keras (``assert_same_paths`` is the looser check)."""
    if check_types is not None:
        looser = "" if check_types else (" For a looser check, use `keras.tree.assert_same_paths()`, which "
                                         "considers `list`, `tuple`, `namedtuple` and `deque` as matching")
        warnings.warn("The `check_types` argument is deprecated and no longer has any effect." + looser,
                      DeprecationWarning, stacklevel=2)
    map_structure(lambda *leaves: None, a, b)


def _paths(structure):
    return {path for path, _ in flatten_with_path(structure)}


def assert_same_paths(a, b):
    """Raise ValueError unless ``a`` and ``b`` have the same leaf paths,
    whatever their node types (a list matches a tuple)."""
    a_paths, b_paths = _paths(a), _paths(b)
    if a_paths != b_paths:
        message = "`a` and `b` don't have the same paths."
        if a_paths - b_paths:
            message += f"\nPaths in `a` missing in `b`:\n{a_paths - b_paths}"
        if b_paths - a_paths:
            message += f"\nPaths in `b` missing in `a`:\n{b_paths - a_paths}"
        raise ValueError(message)


def pack_sequence_as(structure, flat_sequence):
    """The leaves ``flat_sequence`` (in ``flatten`` order) put back into
    ``structure``'s layout.

    Raises:
        TypeError: ``flat_sequence`` is not a sequence.
        ValueError: it holds more or fewer leaves than ``structure``.
    """
    if isinstance(flat_sequence, (str, bytes, dict)) or not hasattr(flat_sequence, "__iter__"):
        raise TypeError(f"pack_sequence_as expects flat_sequence to be a list or tuple of leaves, received "
                        f"{_describe(flat_sequence)}.")
    leaves = list(flat_sequence)
    expected = len(flatten(structure))
    if len(leaves) != expected:
        what = "few" if len(leaves) < expected else "many"
        raise ValueError(f"pack_sequence_as: too {what} leaves for the structure; expected {expected}, received "
                         f"{len(leaves)}.")
    position = iter(leaves)

    def build(item):
        if not _is_node(item):
            return next(position)
        return _rebuild(item, [build(child) for _, child in _children(item)])

    return build(structure)


def traverse(func, structure, top_down=True):
    """Keras's ``tree.traverse``: ``func`` on every node and leaf.

    Top down, ``func(subtree)`` returning None goes on into the subtree's
    children; anything else replaces the subtree (``MAP_TO_NONE`` replaces
    it with None). Bottom up, the children are traversed first and
    ``func`` sees the rebuilt subtree; None keeps it.
    """
    if not callable(func):
        raise TypeError(f"traverse expects a callable func, received {_describe(func)}.")

    def children_traversed(subtree):
        if not _is_node(subtree):
            return subtree
        return _rebuild(subtree, [traverse(func, child, top_down) for _, child in _children(subtree)])

    if top_down:
        result = func(structure)
        if result is None:
            return children_traversed(structure)
    else:
        traversed = children_traversed(structure)
        result = func(traversed)
        if result is None:
            return traversed
    return None if result is MAP_TO_NONE else result


def lists_to_tuples(structure):
    """``structure`` with every list turned into a tuple."""
    return traverse(lambda node: tuple(node) if isinstance(node, list) else None, structure, top_down=False)


def _is_shape(value):
    return isinstance(value, (list, tuple)) and all(isinstance(item, (int, type(None))) for item in value)


def map_shape_structure(func, structure):
    """``map_structure`` where a list or tuple of ints and Nones (a shape) is
    a leaf: ``func`` receives whole shapes."""
    if _is_shape(structure) or not _is_node(structure):
        return func(structure)
    return _rebuild(structure, [map_shape_structure(func, child) for _, child in _children(structure)])
