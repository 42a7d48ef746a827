"""Variable: a weight, Keras 3 style (``keras.Variable``).

A Variable is a leaf Tensor, so it takes part in arithmetic, ``ops.*`` and
``backward()`` like any other tensor, with the mutable-state methods Keras
users write against: ``assign``, ``assign_add``, ``assign_sub``, ``.value``,
``.trainable``, ``.path``. ``Layer.add_weight`` makes them.

Naming: ``path`` is Keras 3's: the open name scopes and the name, so a
layer's weight is ``"<the layers that built it>/<layer>/<weight>"``
(``"sequential/dense/kernel"``; layers/layer_paths.py). ``name`` is
``"<layer>/<weight>"`` (Keras 3 gives only ``"<weight>"``): minikeras's
weight files label their datasets with it. Use ``path`` in new code.
"""
import numpy

from minikeras import scopes
from minikeras.autograd import Tensor
from minikeras.backend.dtypes import as_numpy_dtype, is_float_dtype


# How replicas combine a step's changes to a variable (Keras's names):
# "mean" the changes weighted by each replica's share of the batch, "sum"
# their sum, "only_first_replica" the first replica's, "none" each keeps its own.
AGGREGATIONS = ("none", "mean", "sum", "only_first_replica")


class Variable(Tensor):
    """A trainable (or not) piece of state, e.g. a layer's kernel.

    Args:
        initializer: the initial value (array, number, Tensor) or an
            initializer (name, Initializer, callable ``(shape, dtype)``),
            which then needs ``shape``.
        shape: the shape, required with an initializer.
        dtype: the dtype; by default an array's own, float32 for numbers
            and lists.
        trainable: whether training updates it (and gradients reach it).
        name: the label, also the ``path`` unless ``path`` is given.
        device: where it lives; default: the current device scope.

    Example:
        >>> v = Variable(numpy.zeros(3), name="counter")
        >>> v.assign_add(numpy.ones(3)).numpy()
        array([1., 1., 1.], dtype=float32)
    """

    __slots__ = ("_trainable", "_path", "autocast", "aggregation", "constraint", "_overwrite_with_gradient")

    def __init__(self, initializer=None, shape=None, dtype=None, trainable=True, name=None, device=None,
                 path=None, **kwargs):
        # ``aggregation`` (Keras's): how data-parallel replicas combine the
        # changes a step makes to this variable (layers/state_updates.py);
        # ``synchronization`` is accepted so scripts run (minikeras keeps
        # replicas in step by aggregation alone). ``autocast``: a layer of a
        # mixed policy reads it cast to its compute dtype (autograd/autocast.py).
        unknown = set(kwargs) - {"autocast", "aggregation", "synchronization"}
        if unknown:
            raise TypeError(f"Variable got unexpected keyword argument(s): {sorted(unknown)}.")
        aggregation = kwargs.get("aggregation", "none")
        if aggregation is None:
            aggregation = "none"
        if aggregation not in AGGREGATIONS:
            raise ValueError(f"Variable {name or ''!r}: aggregation must be one of {list(AGGREGATIONS)}, "
                             f"received {aggregation!r}.")
        value = _initial_value(initializer, shape, dtype, name)
        # Without a dtype an array keeps its own (as in Keras); Python
        # numbers and lists become float32 (as Tensor makes them).
        super().__init__(value, dtype=dtype, device=device, name=name or "variable")
        self.requires_grad = bool(trainable) and is_float_dtype(self.dtype)
        # Its own C-ordered buffer: never a view of the caller's array or of
        # an initializer's broadcast, since assign() writes in place.
        with self.device.activate():
            self.data = self.data.copy()
        self.device.memory.track(self.data)
        self._trainable = bool(trainable)
        self._path = _scoped(path or self.name)
        self.autocast = bool(kwargs.get("autocast", True))
        self.aggregation = aggregation
        self.constraint = None  # a callable on the array, applied by the optimizer after each update
        self._overwrite_with_gradient = False

    @property
    def overwrite_with_gradient(self):
        """Whether the optimizer sets this variable to its "gradient" instead of
        updating it with it (Keras 3: a float8 layer's scales and amax
        histories, whose backward pass computes their next values)."""
        return self._overwrite_with_gradient

    @overwrite_with_gradient.setter
    def overwrite_with_gradient(self, value):
        if not isinstance(value, bool):
            raise TypeError(f"`overwrite_with_gradient` must be a boolean. Received: {value}")
        self._overwrite_with_gradient = value

    @property
    def trainable(self):
        """Whether training updates this variable."""
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        self._trainable = bool(value)
        self.requires_grad = self._trainable and is_float_dtype(self.dtype)

    @property
    def path(self):
        """Where the variable lives: the name scopes open when it was made,
        then its name (``"sequential/dense/kernel"``), as in Keras 3."""
        return self._path

    @property
    def value(self):
        """The variable as a tensor (itself: differentiable in ops)."""
        return self

    def assign(self, value):
        """Overwrite the value in place, keeping shape and dtype; returns self.
        Inside a ``StatelessScope`` the scope's copy is written instead."""
        value = _as_data(value)
        if not hasattr(value, "shape") and not isinstance(value, (int, float)):
            value = numpy.asarray(value)  # lists and tuples
        return self._write(value)

    def _write(self, value):
        stateless = scopes.get_stateless_scope()
        if stateless is not None:
            stateless.writable_array(self)
        return super().assign(value)

    def assign_add(self, delta):
        """``variable += delta`` in place (no gradient recorded); returns self."""
        delta = self._aligned(delta)
        with self.device.activate():
            total = self.data + delta
        return self._write(total)

    def assign_sub(self, delta):
        """``variable -= delta`` in place (no gradient recorded); returns self."""
        delta = self._aligned(delta)
        with self.device.activate():
            total = self.data - delta
        return self._write(total)

    def _aligned(self, delta):
        delta = _as_data(delta)
        shape = tuple(numpy.shape(delta)) if not hasattr(delta, "shape") else tuple(delta.shape)
        if shape and shape != self.shape:
            try:
                numpy.broadcast_shapes(shape, self.shape)
            except ValueError:
                raise ValueError(
                    f"Variable '{self.path}' has shape {self.shape}; cannot add or subtract a value of shape {shape}."
                ) from None
        with self.device.activate():
            return self.device.xp.asarray(delta, dtype=self.dtype) if not isinstance(delta, (int, float)) else delta

    def numpy(self):
        """A host copy of the value: a snapshot that later updates (training
        steps, ``assign``) leave unchanged, as in Keras."""
        host = self.device.to_host(self.data)
        return host.copy() if host is self.data else host

    def __array__(self, dtype=None, copy=None):
        """As ``Tensor.__array__``, but a copy unless ``copy=False`` asks for
        the live buffer: ``numpy.asarray(variable)`` is a snapshot, as in Keras."""
        return super().__array__(dtype, copy=True if copy is None else copy)

    def __repr__(self):
        return (f"<Variable path={self.path}, shape={self.shape}, dtype={self.dtype}, "
                f"value={numpy.array2string(self.numpy(), separator=', ', threshold=8)}>")


def _scoped(path):
    """``path`` under the open ``name_scope``s (Keras's variable paths)."""
    parent = scopes.current_path()
    return f"{parent}/{path}" if parent else path


def _as_data(value):
    return value.data if isinstance(value, Tensor) else value


def _initial_value(initializer, shape, dtype, name):
    if initializer is None:
        raise ValueError(f"Variable {name or ''!r} needs an initializer: an initial value or an initializer and a shape.")
    if isinstance(initializer, str) or (callable(initializer) and not isinstance(initializer, Tensor)):
        from minikeras import initializers

        if shape is None:
            raise ValueError(f"Variable {name or ''!r}: an initializer ({initializer!r}) needs a shape.")
        value = initializers.get(initializer)(tuple(int(s) for s in shape), dtype=as_numpy_dtype(dtype or "float32"))
        return _as_data(value)
    value = _as_data(initializer)
    if shape is not None and tuple(numpy.shape(value)) != tuple(shape):
        raise ValueError(f"Variable {name or ''!r}: the initial value has shape {numpy.shape(value)}, "
                         f"but shape={tuple(shape)} was given.")
    return value
