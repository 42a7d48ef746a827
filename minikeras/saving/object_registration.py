"""Keras's custom-object names: ``get_custom_objects``, ``custom_object_scope``
(``CustomObjectScope``), ``get_registered_name`` and ``get_registered_object``.

They share one table with ``register_keras_serializable`` (``_safety.py``):
the allow-list that loading consults. An object put into
``get_custom_objects()`` or made visible by a ``custom_object_scope`` block is
therefore found by ``load_model``, ``model_from_json`` and
``deserialize_keras_object`` exactly as one passed in ``custom_objects=``;
nothing else is (a file still cannot name an arbitrary importable class).
"""
from minikeras.saving import _safety
from minikeras.saving._safety import register_keras_serializable  # noqa: F401  (re-exported by Keras's names)


def get_custom_objects():
    """The global ``{name: object}`` table, live: adding to it makes an object
    loadable by name, as in Keras.

    ``register_keras_serializable(package, name)`` puts an object there as
    ``"package>name"`` (and, in minikeras, also as plain ``name``).

    Example:
        >>> get_custom_objects()["MyLayer"] = MyLayer  # doctest: +SKIP
    """
    return _safety._REGISTERED


class CustomObjectScope:
    """``with custom_object_scope({"MyLayer": MyLayer}):`` makes the objects
    loadable by name inside the block (this thread only), as Keras's.

    Args:
        *custom_objects: dicts of ``{name: object}`` (None is skipped).
    """

    def __init__(self, *custom_objects):
        for objects in custom_objects:
            if objects is not None and not isinstance(objects, dict):
                raise TypeError(f"custom_object_scope takes dicts of {{name: object}}, received "
                                f"{type(objects).__name__}.")
        self.custom_objects = {}
        for objects in custom_objects:
            self.custom_objects.update(objects or {})

    def __enter__(self):
        scopes = getattr(_safety._local, "custom_object_scopes", ())
        _safety._local.custom_object_scopes = scopes + (self.custom_objects,)
        return self

    def __exit__(self, *exc_info):
        scopes = _safety._local.custom_object_scopes
        _safety._local.custom_object_scopes = scopes[:-1]


custom_object_scope = CustomObjectScope


def get_registered_name(obj):
    """``"package>name"`` for an object registered with
    ``register_keras_serializable``, otherwise its ``__name__``."""
    return _safety.registered_name(obj) or obj.__name__


def get_registered_object(name, custom_objects=None, module_objects=None):
    """The object registered (or scoped) as ``name``, else from
    ``custom_objects``, else from ``module_objects``; None when none has it.

    Args:
        name: the name to look up.
        custom_objects: a dict searched after the global table and scopes.
        module_objects: a dict searched last (Keras passes a module's globals).
    """
    scoped = _safety.registered_objects()
    if name in scoped:
        return scoped[name]
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    if module_objects and name in module_objects:
        return module_objects[name]
    return None
