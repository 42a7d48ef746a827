"""The allow-list that loading consults: ``register_keras_serializable``'s
table, and Keras's custom-object names over it (``get_custom_objects``,
``custom_object_scope``/``CustomObjectScope``, ``get_registered_name``,
``get_registered_object``; re-exported by ``saving`` and ``utils``).

A model file is data: everything in it that names a class or a function is
resolved against an explicit allow-list (the library's own objects, the ones
registered here, and the ``custom_objects`` the caller passes), never by
importing a module or looking an attribute up on one (:func:`resolve_name`).
An object put into ``get_custom_objects()`` or made visible by a
``custom_object_scope`` block is therefore found by ``load_model``,
``model_from_json`` and ``deserialize_keras_object`` exactly as one passed
in ``custom_objects=``. Layers, activations and quantizers look their
registered names up here, below ``saving/``.
"""
import threading

_local = threading.local()
_REGISTERED = {}
_REGISTERED_NAMES = {}  # object -> "package>name" (Keras's GLOBAL_CUSTOM_NAMES)


def register_keras_serializable(package="Custom", name=None):
    """Decorator: make a class or function loadable by name without
    ``custom_objects`` (it joins the allow-list as ``name`` and
    ``"package>name"``). A class is saved under the ``registered_name``
    ``"package>name"``, as Keras 3 names it.

    Example:
        >>> @register_keras_serializable()
        ... def double(x):
        ...     return x * 2
    """
    def decorate(obj):
        key = name or obj.__name__
        _REGISTERED[key] = obj
        _REGISTERED[f"{package}>{key}"] = obj
        _REGISTERED_NAMES[obj] = f"{package}>{key}"
        if isinstance(obj, type):
            # The name files carry as ``registered_name`` (Keras 3 resolves it
            # against its own register_keras_serializable).
            obj._keras_registered_name = f"{package}>{key}"
        return obj

    return decorate


def registered_name(obj):
    """``"package>name"`` for an object registered with
    register_keras_serializable, else None."""
    try:
        return _REGISTERED_NAMES.get(obj)
    except TypeError:  # unhashable
        return None


def registered_objects():
    """A copy of ``{name: object}`` registered with register_keras_serializable
    (or added to ``get_custom_objects()``), with the objects of the active
    ``custom_object_scope`` blocks on top (below)."""
    found = dict(_REGISTERED)
    for scope in getattr(_local, "custom_object_scopes", ()):
        found.update(scope)
    return found


def resolve_name(name, allowed, custom_objects=None, kind="object", source="the file"):
    """The object a file names, looked up only in the allow-list.

    Args:
        name: the name read from the file.
        allowed: ``{name: object}`` of the library objects of this kind.
        custom_objects: the caller's ``{name: object}``, searched first.
        kind: what the name stands for, for messages ("loss", "layer class").
        source: the file, for messages.

    Raises:
        ValueError: the name is not a string or not on the allow-list. It is
            never imported or looked up as an attribute of a module.
    """
    if not isinstance(name, str):
        raise ValueError(f"Expected the name of a {kind} in {source}, found {name!r}.")
    for table in (custom_objects or {}, allowed, registered_objects()):
        if name in table:
            return table[name]
    raise ValueError(
        f"Unknown {kind} {name!r} in {source}: names resolve only against minikeras's own objects, "
        f"register_keras_serializable() and custom_objects. If it is yours, pass custom_objects={{{name!r}: ...}}."
    )


def is_library_object(obj):
    """Whether ``obj`` (a class or function) is defined inside minikeras."""
    module = getattr(obj, "__module__", None) or ""
    return module == "minikeras" or module.startswith("minikeras.")


def get_custom_objects():
    """The global ``{name: object}`` table, live: adding to it makes an object
    loadable by name, as in Keras.

    ``register_keras_serializable(package, name)`` puts an object there as
    ``"package>name"`` (and, in minikeras, also as plain ``name``).

    Example:
        >>> get_custom_objects()["MyLayer"] = MyLayer  # doctest: +SKIP
    """
    return _REGISTERED


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
        scopes = getattr(_local, "custom_object_scopes", ())
        _local.custom_object_scopes = scopes + (self.custom_objects,)
        return self

    def __exit__(self, *exc_info):
        scopes = _local.custom_object_scopes
        _local.custom_object_scopes = scopes[:-1]


custom_object_scope = CustomObjectScope


def get_registered_name(obj):
    """``"package>name"`` for an object registered with
    ``register_keras_serializable``, otherwise its ``__name__``."""
    return registered_name(obj) or obj.__name__


def get_registered_object(name, custom_objects=None, module_objects=None):
    """The object registered (or scoped) as ``name``, else from
    ``custom_objects``, else from ``module_objects``; None when none has it.

    Args:
        name: the name to look up.
        custom_objects: a dict searched after the global table and scopes.
        module_objects: a dict searched last (Keras passes a module's globals).
    """
    scoped = registered_objects()
    if name in scoped:
        return scoped[name]
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    if module_objects and name in module_objects:
        return module_objects[name]
    return None
