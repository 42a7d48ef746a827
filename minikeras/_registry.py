"""Name <-> object lookup shared by initializers, regularizers and constraints:
Keras's ``get`` / ``serialize`` / ``deserialize`` triple, written once."""


class ObjectRegistry:
    """The named classes of one kind of object (e.g. "constraint").

    Args:
        kind: the kind's name, for messages.
        base: the base class of the kind.
        by_name: ``{name: class}``, aliases included.
        listed: which names an "unknown name" error lists (default: all).
    """

    def __init__(self, kind, base, by_name, listed=None):
        self.kind = kind
        self.base = base
        self.by_name = by_name
        self.listed = listed or (lambda names: sorted(names))

    def serialize(self, obj):
        """``{"class_name": ..., "config": {...}}``; None for None; a name stays a
        name; a plain function gives its name."""
        if obj is None:
            return None
        if isinstance(obj, self.base):
            return {"class_name": type(obj).__name__, "config": obj.get_config()}
        if isinstance(obj, str):
            return obj
        if callable(obj) and hasattr(obj, "__name__"):
            return obj.__name__
        raise TypeError(f"Cannot serialize {self.kind} {obj!r}: expected a {self.base.__name__} or a function.")

    def deserialize(self, config, custom_objects=None):
        """Rebuild an object from :meth:`serialize`'s output (or a name)."""
        custom_objects = custom_objects or {}
        if isinstance(config, str):
            if config in custom_objects:
                found = custom_objects[config]
                return found() if isinstance(found, type) else found
            return self.lookup(config)()
        if not isinstance(config, dict) or "class_name" not in config:
            raise ValueError(
                f"Could not deserialize {self.kind} {config!r}: expected a name or a dict with "
                "'class_name' and 'config'."
            )
        cls = custom_objects.get(config["class_name"]) or self.lookup(config["class_name"])
        arguments = dict(config.get("config") or {})
        return cls.from_config(arguments) if hasattr(cls, "from_config") else cls(**arguments)

    def lookup(self, name):
        """The class registered as ``name``; ValueError listing the known names."""
        try:
            return self.by_name[name]
        except KeyError:
            known = self.listed(self.by_name)
            raise ValueError(f"Unknown {self.kind} '{name}'. Known {self.kind}s: {known}.") from None

    def get(self, identifier):
        """None, a name, a config dict, an instance, a class of the kind, or a callable."""
        if identifier is None:
            return None
        if isinstance(identifier, (str, dict)):
            return self.deserialize(identifier)
        if isinstance(identifier, type) and issubclass(identifier, self.base):
            return identifier()
        if callable(identifier):
            return identifier
        raise ValueError(
            f"Could not interpret {self.kind} {identifier!r}: expected a name, a config dict, "
            f"a {self.base.__name__} or a callable."
        )


class Configurable:
    """What initializers, regularizers and constraints share: the config is
    the constructor's arguments, and the repr shows them."""

    def get_config(self):
        """The constructor arguments as a JSON-serialisable dict."""
        return {}

    @classmethod
    def from_config(cls, config):
        """Build an instance from ``get_config()``'s output."""
        return cls(**config)

    def __repr__(self):
        arguments = ", ".join(f"{key}={value!r}" for key, value in self.get_config().items())
        return f"{type(self).__name__}({arguments})"
