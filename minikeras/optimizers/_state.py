"""OptimizerState: how an optimizer makes, exports, restores and copies its slots."""
import copy

import numpy

from minikeras import backend
from minikeras.device import to_host
from minikeras.optimizers._slots import StateEntry


class OptimizerState:
    """Mixin of :class:`~minikeras.optimizers.Optimizer` holding its state.

    Expects the optimizer to set ``_state`` (a list of StateEntry),
    ``_trainable_variables`` (the build list), ``_variable_index``
    (id(variable) -> position), ``_iterations`` (int) and ``built``.
    """

    def __deepcopy__(self, memo):
        """A copy with its own slots (copied values), step count and
        scratch, built for the copies of its variables.

        The variables are copied through ``memo``, so ``copy.deepcopy(model)``
        gives an optimizer built for the copied model's weights, which goes
        on training from where the original was (as Keras 3's deepcopy of a
        compiled model does). What Python's default copy gets wrong is the
        lookups keyed by ``id(variable)``: their int keys are copied
        unchanged and would name the original's variables, so the copy
        would refuse its own ("unknown variable"). :meth:`_rekey_after_copy`
        makes them anew from the copied variables.
        """
        clone = type(self).__new__(type(self))
        memo[id(self)] = clone
        for entry in self._state:  # copied by their device, in its activate() (as Tensor.__deepcopy__ does)
            if entry.device is not None and id(entry.array) not in memo:
                memo[id(entry.array)] = entry.device.copy_array(entry.array)
        clone.__dict__.update(copy.deepcopy(self.__dict__, memo))
        clone._rekey_after_copy(self, memo)
        return clone

    def __reduce__(self):
        """Pickled as Keras pickles an optimizer, through what its saved file
        holds (the config and the state as host arrays), plus the variables
        it is built for and those exempt from weight decay, pickled with it:
        the loaded optimizer is built for the loaded variables and goes on
        from the same step."""
        built_for = list(self._trainable_variables) if self.built else None
        exempt = (list(getattr(self, "_excluded_variables", ())), tuple(getattr(self, "_exclude_names", ())))
        return _unpickle_optimizer, (type(self), self.get_config(), built_for, self.get_state(), exempt)

    def _rekey_after_copy(self, original, memo):
        """Key this copy's per-variable lookups by its own variables
        (subclasses with more such lookups extend it); ``memo`` maps the
        ids of the objects copied so far to their copies."""
        self._variable_index = rekeyed(original._variable_index, original._trainable_variables,
                                       self._trainable_variables)
        for entry in self._state:
            if entry.device is not None:
                entry.device.memory.track(entry.array)

    def add_variable_from_reference(self, reference_variable, name, initializer=0.0):
        """A state array shaped like ``reference_variable``, on its device and in
        its dtype, filled with ``initializer``; recorded in the saved state.

        Args:
            reference_variable: the Tensor the slot belongs to.
            name: the slot name, e.g. ``"momentum"``.
            initializer: the initial value (a number).

        Returns:
            The slot array (numpy or cupy).
        """
        device = reference_variable.device
        with device.activate():
            array = device.xp.full(reference_variable.shape, initializer, dtype=reference_variable.dtype)
        device.memory.track(array)
        index = self._variable_index.get(id(reference_variable), len(self._state))
        # Keras's slot name: the variable's path, "/" as "_" ("sequential_dense_kernel_momentum").
        label = getattr(reference_variable, "path", None) or reference_variable.name or f"variable_{index}"
        self._state.append(StateEntry(f"{label}_{name}".replace("/", "_"), array, device))
        return array

    def add_optimizer_variables(self, variables, name, initializer=0.0):
        """Slots for each of ``variables`` (see :meth:`add_variable_from_reference`).

        Args:
            variables: the Tensors to make slots for.
            name: a slot name, or a list of names; with a list, the slots are
                made variable by variable (all names for the first variable,
                then for the second...), the order Keras 3 saves them in.
            initializer: the initial value, or one per name.

        Returns:
            A list of arrays, or a tuple of such lists when ``name`` is a list.
        """
        names = [name] if isinstance(name, str) else list(name)
        initializers = initializer if isinstance(initializer, (list, tuple)) else [initializer] * len(names)
        if len(initializers) != len(names):
            raise ValueError(
                f"{type(self).__name__}: received {len(names)} slot names but {len(initializers)} initializers."
            )
        slots = tuple([] for _ in names)
        for variable in variables:
            for slot_list, slot_name, value in zip(slots, names, initializers):
                slot_list.append(self.add_variable_from_reference(variable, slot_name, value))
        return slots[0] if isinstance(name, str) else slots

    def add_scalar_state(self, name, value, dtype):
        """A host 0-d array of optimizer-wide state (e.g. Nadam's momentum
        product), recorded in the saved state after the slots made so far."""
        array = numpy.array(value, dtype=dtype)
        self._state.append(StateEntry(name, array))
        return array

    def built_variables(self):
        """The variables the optimizer was built on, in build order (empty
        before ``build``)."""
        return list(self.__dict__.get("_trainable_variables") or ())

    def state_entries(self):
        """The slots as :class:`~minikeras.optimizers._slots.StateEntry`
        objects (name, live array, device), in :meth:`get_state` order."""
        return list(self._state)

    @property
    def variables(self):
        """The state as arrays, in :meth:`get_state` order: the step counter
        (a 0-d int64 array), then the slot arrays themselves (live, on their
        devices)."""
        return [numpy.array(self._iterations, dtype=numpy.int64)] + [entry.array for entry in self._state]

    def get_state(self):
        """The optimizer state as host NumPy arrays, for saving.

        Order: the step counter (0-d int64), then the slots in the order
        they were made, which is Keras 3's ``optimizer.variables`` order
        without the learning rate: EMA averages and gradient accumulators (if
        any) for each variable, then the optimizer's own slots, variables
        taken in the order given to ``build`` (Adam: momentum and velocity
        of the first variable, then of the second, ...; then velocity_hat of
        each with amsgrad), then optimizer-wide scalars (Nadam's
        u_product). The learning rate is not state: it is in
        ``get_config()``.

        Returns:
            A list of NumPy arrays (copies).
        """
        state = [numpy.array(self._iterations, dtype=numpy.int64)]
        state.extend(entry.to_host() for entry in self._state)
        return state

    def state_names(self):
        """Names of the :meth:`get_state` entries, Keras's: ``"iteration"``, then
        each slot's ``"<variable path, '/' as '_'>_<slot>"``
        (``"sequential_dense_kernel_momentum"``)."""
        return ["iteration"] + [entry.name for entry in self._state]

    def set_state(self, state):
        """Restore a :meth:`get_state` list exactly (values copied in place).

        The optimizer must be built on the same variables first
        (``optimizer.build(variables)``) unless ``state`` holds only the
        step counter.

        Args:
            state: list of arrays as returned by ``get_state``.

        Raises:
            ValueError: wrong number of arrays, or an array of the wrong shape
                (the message names the slot).
        """
        state = list(state)
        owner = type(self).__name__
        if not self.built and len(state) != 1:
            raise ValueError(
                f"{owner}.set_state: the optimizer has not been built yet, so it has no slots to restore "
                f"{len(state)} arrays into. Call `optimizer.build(variables)` first."
            )
        expected = 1 + len(self._state)
        if len(state) != expected:
            raise ValueError(
                f"{owner}.set_state expects {expected} arrays ({', '.join(self.state_names())}), "
                f"received {len(state)}."
            )
        iterations = numpy.asarray(to_host(state[0]) if backend.is_array(state[0]) else state[0])
        if iterations.size != 1 or iterations.dtype.kind not in "iuf" or float(iterations.reshape(())) < 0:
            raise ValueError(
                f"{owner}.set_state: entry 0 ('iteration') must be a non-negative step count, received {state[0]!r}."
            )
        for position, (entry, value) in enumerate(zip(self._state, state[1:]), start=1):
            shape = tuple(numpy.shape(value))
            if shape != tuple(entry.array.shape):
                raise ValueError(
                    f"{owner}.set_state: entry {position} ('{entry.name}') expects shape "
                    f"{tuple(entry.array.shape)}, received {shape}."
                )
        for entry, value in zip(self._state, state[1:]):
            entry.assign(value)
        self._iterations = int(iterations.reshape(()))


    def unbuilt_snapshot(self):
        """The attributes of an optimizer with no state yet, to put back with
        :meth:`restore_unbuilt` when the update that builds it fails half way
        (slots made for some variables only would fail every later step).
        The learning rate (maybe a user's schedule or callable) and wrapped
        optimizers (they guard themselves) are shared, not copied. None when
        an attribute cannot be copied."""
        attributes = vars(self)
        memo = {id(value): value for value in attributes.values() if isinstance(value, OptimizerState)}
        rate = attributes.get("_learning_rate")
        memo[id(rate)] = rate
        try:
            return copy.deepcopy(attributes, memo)
        except Exception:  # an attribute of a custom optimizer that cannot be copied
            return None

    def restore_unbuilt(self, snapshot):
        """Put back the attributes :meth:`unbuilt_snapshot` saved."""
        if snapshot is not None:
            self.__dict__.clear()
            self.__dict__.update(snapshot)


def _unpickle_optimizer(cls, config, built_for, state, exempt):
    """The optimizer that ``OptimizerState.__reduce__`` pickled."""
    optimizer = cls.from_config(config)
    excluded_variables, excluded_names = exempt
    if excluded_variables or excluded_names:
        optimizer.exclude_from_weight_decay(var_list=excluded_variables, var_names=excluded_names)
    if built_for is not None:
        optimizer.build(built_for)
    optimizer.set_state(state)
    return optimizer


def rekeyed(by_id, originals, copies):
    """``by_id`` (a dict keyed by ``id(variable)``) keyed by the ids of
    ``copies`` instead of those of the ``originals`` they pair with."""
    return {id(new): by_id[id(old)] for old, new in zip(originals, copies) if id(old) in by_id}


class VariableReferences(list):
    """Variables an optimizer refers to without being built for them (those
    excluded from weight decay, which may be given before ``build``).

    A deep copy refers to the copies of those copied in the same
    ``copy.deepcopy`` (a copied model's), to the originals otherwise: a
    snapshot of the optimizer's attributes (:meth:`OptimizerState.unbuilt_snapshot`)
    must still name the model's own variables.
    """

    def __deepcopy__(self, memo):
        return VariableReferences(memo.get(id(variable), variable) for variable in self)
