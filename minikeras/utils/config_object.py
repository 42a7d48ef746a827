"""``utils.Config``: a dict with attribute access that can be frozen, as Keras's."""
import json


class Config:
    """Hold settings as attributes and items; ``freeze()`` makes it read-only.

    Example:
        >>> config = Config(learning_rate=0.1)
        >>> config.momentum = 0.9
        >>> config["momentum"]
        0.9
        >>> config.freeze()
    """

    __attrs__ = None

    def __init__(self, **kwargs):
        object.__setattr__(self, "_config", kwargs)
        object.__setattr__(self, "_frozen", False)
        object.__setattr__(self, "__attrs__", set(dir(self)))

    @property
    def frozen(self):
        """True once ``freeze()`` was called."""
        return self._frozen

    def freeze(self):
        """Make the Config immutable."""
        object.__setattr__(self, "_frozen", True)

    def unfreeze(self):
        """Make the Config mutable again."""
        object.__setattr__(self, "_frozen", False)

    def _check(self, name):
        if self._frozen:
            raise ValueError(f"Cannot mutate attribute(s) because the config is frozen (setting {name!r}).")

    def __setattr__(self, name, value):
        self._check(name)
        if name in self.__attrs__:
            raise AttributeError(f"Cannot mutate attribute `{name}` because it is a reserved attribute of Config.")
        self._config[name] = value

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._config[name]
        except KeyError:
            raise AttributeError(f"Unknown attribute: '{name}'") from None

    def __delattr__(self, name):
        self._check(name)
        del self._config[name]

    def __setitem__(self, key, value):
        self._check(key)
        self._config[key] = value

    def __getitem__(self, key):
        return self._config[key]

    def __delitem__(self, key):
        self._check(key)
        del self._config[key]

    def __contains__(self, item):
        return item in self._config

    def __len__(self):
        return len(self._config)

    def __iter__(self):
        return iter(self._config)

    def keys(self):
        return self._config.keys()

    def values(self):
        return self._config.values()

    def items(self):
        return self._config.items()

    def get(self, key, default=None):
        return self._config.get(key, default)

    def pop(self, *args):
        self._check(args[0] if args else None)
        return self._config.pop(*args)

    def update(self, *args, **kwargs):
        self._check("update")
        return self._config.update(*args, **kwargs)

    def as_dict(self):
        """A copy as a plain dict."""
        return dict(self._config)

    def to_json(self):
        """The settings as JSON text."""
        return json.dumps(self._config)

    def __repr__(self):
        return f"<Config {self._config}>"
