"""Keras 3's scopes: ``name_scope``, ``StatelessScope`` and ``SymbolicScope``
(``keras.name_scope``, ``keras.StatelessScope``, ``keras.SymbolicScope``).

Each scope is thread-local, as Keras's global state is.

``StatelessScope`` keeps variables unchanged: inside it, a variable of
``state_mapping`` reads as its mapped value and an assignment to any
variable is recorded in the scope instead of applied. minikeras's
variables hold their array directly (ops read it), so the scope swaps the
arrays in on entry and back on exit: the swap is seen by every thread
while the scope is open. Assignments are those made through ``assign``,
``assign_add`` and ``assign_sub`` (Keras's API).
"""
import threading

import numpy

_local = threading.local()


def _stack(name):
    stack = getattr(_local, name, None)
    if stack is None:
        stack = []
        setattr(_local, name, stack)
    return stack


class name_scope:  # noqa: N801  (Keras's name)
    """Variables made inside get ``path`` ``"<scope>/.../<name>"``.

    Args:
        name: the scope's name (no ``/``).
        caller: the object opening it; with ``deduplicate``, reopening the
            innermost scope of the same name and caller adds no level.
        deduplicate: see ``caller``.
        override_parent: an absolute path replacing the enclosing scopes';
            by default, with ``deduplicate``, the caller's ``_parent_path``
            if it has one (a layer's: where its scope was first opened).

    Example:
        >>> with minikeras.name_scope("encoder"):
        ...     v = minikeras.Variable(1.0, name="scale")
        >>> v.path
        'encoder/scale'
    """

    def __init__(self, name, caller=None, deduplicate=True, override_parent=None):
        if not isinstance(name, str) or "/" in name:
            raise ValueError(f"Argument `name` must be a string and cannot contain character `/`. Received: "
                             f"name={name}")
        if override_parent is None and deduplicate and getattr(caller, "_parent_path", None) is not None:
            override_parent = caller._parent_path  # a layer's scope stays where it was first opened
        self.name, self.caller, self.deduplicate, self.override_parent = name, caller, deduplicate, override_parent
        self._pop_on_exit = False

    def __enter__(self):
        stack = getattr(_local, "names", None)  # (_stack inlined: every layer call opens a scope)
        if stack is None:
            stack = _local.names = []
        if self.deduplicate and stack and self.caller is not None and stack[-1].caller is self.caller \
                and stack[-1].name == self.name:
            return self
        stack.append(self)
        self._pop_on_exit = True
        return self

    def __exit__(self, *exc_info):
        if self._pop_on_exit:
            _local.names.pop()
            self._pop_on_exit = False


def current_path():
    """The path of the open name scopes (``""`` outside any)."""
    parts = []
    for scope in getattr(_local, "names", ()):
        if scope.override_parent is not None:
            parts = [part for part in scope.override_parent.split("/") if part]
        parts.append(scope.name)
    return "/".join(parts)


class SymbolicScope:
    """Marks code that runs on symbolic tensors (``in_symbolic_scope()``)."""

    def __enter__(self):
        _stack("symbolic").append(self)
        return self

    def __exit__(self, *exc_info):
        _stack("symbolic").pop()


def in_symbolic_scope():
    return bool(getattr(_local, "symbolic", None))


class StatelessScope:
    """Run code without changing any variable (Keras's ``StatelessScope``).

    Args:
        state_mapping: ``[(variable, value), ...]``: inside the scope each
            variable reads as its value (same shape, cast to its dtype).
        collect_losses: Keras gathers layer losses in the scope; minikeras
            layers keep theirs in ``layer.losses``, so True is refused.
        initialize_variables: accepted (minikeras variables are always
            initialized when made).

    Example:
        >>> with minikeras.StatelessScope([(v, numpy.ones(v.shape))]) as scope:
        ...     v.assign_add(numpy.ones(v.shape))
        >>> scope.get_current_value(v)   # 2s; v itself is unchanged
    """

    def __init__(self, state_mapping=None, collect_losses=False, initialize_variables=True):
        from minikeras.variables import Variable

        if collect_losses:
            raise ValueError("StatelessScope(collect_losses=True) is not supported: minikeras layers keep the "
                             "losses they add in layer.losses; read them there.")
        self.collect_losses, self.initialize_variables = False, initialize_variables
        self.losses = []
        self._values = {}  # id(variable) -> (variable, array): the mapped and updated values
        for variable, value in state_mapping or ():
            if not isinstance(variable, Variable):
                raise ValueError(f"Invalid reference variable in StatelessScope: all keys in argument `mapping` "
                                 f"must be Variable instances. Received instead: {variable!r:.80}")
            array = _array_for(variable, value)
            if tuple(array.shape) != variable.shape:
                raise ValueError(f"Invalid variable value in StatelessScope: all values in argument `mapping` must "
                                 f"be tensors with a shape that matches the corresponding variable shape. For "
                                 f"variable {variable.path}, received a value of shape {tuple(array.shape)}.")
            self._values[id(variable)] = (variable, array)
        self._originals = {}  # id(variable) -> (variable, its own array), while open

    def __enter__(self):
        stack = _stack("stateless")
        if stack:
            raise RuntimeError("StatelessScope: a stateless scope is already open in this thread; nesting them is "
                               "not supported.")
        stack.append(self)
        for key, (variable, array) in self._values.items():
            self._originals[key] = (variable, variable.data)
            variable.data = array
        return self

    def __exit__(self, *exc_info):
        _stack("stateless").pop()
        for key, (variable, original) in self._originals.items():
            self._values[key] = (variable, variable.data)
            variable.data = original
        self._originals = {}

    def add_update(self, update):
        """Record ``(variable, value)`` as the variable's new value (Keras's API)."""
        variable, value = update
        self.writable_array(variable)[...] = _array_for(variable, value)

    def add_loss(self, loss):
        self.losses.append(loss)

    def writable_array(self, variable):
        """The array an assignment to ``variable`` writes in this scope: the
        scope's own (its mapped value, or a copy of the variable's value
        swapped in on the first write), so the variable's array stays as it was."""
        key = id(variable)
        if key not in self._originals:
            self._originals[key] = (variable, variable.data)
            with variable.device.activate():
                variable.data = variable.data.copy()
        return variable.data

    def get_current_value(self, variable):
        """The variable's value in this scope (a Tensor), or None when it was
        neither mapped nor assigned."""
        from minikeras.autograd.tensor import from_array

        key = id(variable)
        if key in self._originals:
            return from_array(variable.data, variable.device)
        if key in self._values:
            return from_array(self._values[key][1], variable.device)
        return None


def _array_for(variable, value):
    """``value`` as an array of ``variable``'s device and dtype (a copy)."""
    from minikeras.autograd.tensor import Tensor

    if isinstance(value, Tensor):
        value = value.to(variable.device).data
    device = variable.device
    with device.activate():
        if not hasattr(value, "shape"):
            value = numpy.asarray(value)
        return device.asarray(value, variable.dtype).copy()


def get_stateless_scope():
    """The open StatelessScope of this thread, or None."""
    stack = getattr(_local, "stateless", None)
    return stack[-1] if stack else None


def in_stateless_scope():
    return get_stateless_scope() is not None
