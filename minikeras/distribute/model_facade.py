"""What a MirroredModel shows of the model it wraps: layers, weights,
summary, saving. Weights are read from the first replica (all replicas hold
the same); saving writes the plain wrapped model."""
from minikeras.device import registry
from minikeras.autograd.tensor import array_of


class WrappedModelFacade:
    """Mixin for MirroredModel: the wrapped ``model``'s Model surface.

    Expects ``self.model``, ``self._replicas`` (None before they are made),
    ``self._outdated_wrapped`` (True when the wrapped model, not being
    replica 0, missed updates), and for pickling ``self.devices``,
    ``self.sync_batch_norm`` and ``self._spans_processes``.
    """

    def _sync_wrapped(self):
        """Copy replica 0's weights into the wrapped model if it is behind."""
        if self._outdated_wrapped and self._replicas:
            self.model.set_weights(self._replicas[0].get_weights())
            self._outdated_wrapped = False

    @property
    def _primary(self):
        return self._replicas[0] if self._replicas else self.model

    @property
    def built(self):
        """Whether the wrapped model has its weights."""
        return self.model.built

    @property
    def name(self):
        """The wrapped model's name."""
        return self.model.name

    @property
    def dtype_policy(self):
        """The wrapped model's dtype policy (``compile`` adds loss scaling under mixed_float16)."""
        return self.model.dtype_policy

    @property
    def inputs(self):
        """The wrapped model's symbolic inputs (functional and Sequential)."""
        return getattr(self.model, "inputs", None)

    @property
    def outputs(self):
        """The wrapped model's symbolic outputs (names the compiled losses)."""
        return getattr(self.model, "outputs", None)

    @property
    def layers(self):
        """The first replica's layers."""
        return self._primary.layers

    def get_layer(self, name=None, index=None):
        """A layer of the first replica, by name or index."""
        return self._primary.get_layer(name=name, index=index)

    @property
    def weights(self):
        """The first replica's weights."""
        return self._primary.weights

    @property
    def trainable_weights(self):
        """The first replica's trainable weights."""
        return self._primary.trainable_weights

    @property
    def non_trainable_weights(self):
        """The first replica's non-trainable weights."""
        return self._primary.non_trainable_weights

    def get_weights(self):
        """The weights (every replica holds the same) as NumPy arrays."""
        return self._primary.get_weights()

    def set_weights(self, values):
        """Set the weights of every replica (and of the wrapped model)."""
        values = [registry.to_host(array_of(value)) for value in values]
        for replica in self._replicas or ():
            replica.set_weights(values)
        if not self._replicas or self._replicas[0] is not self.model:
            self.model.set_weights(values)
        self._outdated_wrapped = False

    def count_params(self):
        """The wrapped model's parameter count."""
        return self.model.count_params()

    def summary(self, line_length=None, print_fn=None):
        """The wrapped model's summary."""
        self.model.summary(line_length=line_length, print_fn=print_fn)

    def save(self, filepath, overwrite=True, include_optimizer=True):
        """Save the plain wrapped model (``Model.save``): load it with
        ``minikeras.models.load_model``, no MirroredModel needed."""
        self._sync_wrapped()
        self.model.save(filepath, overwrite=overwrite, include_optimizer=include_optimizer)

    def __reduce__(self):
        """``pickle``: the wrapped model (pickled through its ``.keras``
        bytes, synced first) and the devices' names; loading wraps the
        loaded model again on the devices of those names and compiles the
        wrapper as the model was compiled, so training goes on."""
        if self._spans_processes:
            raise TypeError(f"{type(self).__name__} cannot be pickled: it belongs to a job of processes. Pickle "
                            "its plain model (mirrored.model) instead.")
        self._sync_wrapped()
        return _mirrored_from_pickle, (type(self), self.model, [device.name for device in self.devices],
                                       self.sync_batch_norm)

    def save_weights(self, filepath, overwrite=True):
        """Save the weights as ``Model.save_weights`` does."""
        self._sync_wrapped()
        self.model.save_weights(filepath, overwrite=overwrite)

    def load_weights(self, filepath, skip_mismatch=False, by_name=False):
        """Load weights into the wrapped model and every replica."""
        self.model.load_weights(filepath, skip_mismatch=skip_mismatch, by_name=by_name)
        if self._replicas:
            self.set_weights(self.model.get_weights())


def _mirrored_from_pickle(cls, model, device_names, sync_batch_norm):
    """The MirroredModel that ``WrappedModelFacade.__reduce__`` pickled."""
    mirrored = cls(model, devices=device_names, sync_batch_norm=sync_batch_norm)
    if getattr(model, "optimizer", None) is not None:  # the model loaded compiled: so is its wrapper
        mirrored.compile(optimizer=model.optimizer, steps_per_execution=model.steps_per_execution,
                         **model._compile_args)
    return mirrored
