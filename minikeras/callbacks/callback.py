"""Callback and CallbackList: how the training loop talks to the outside."""


class Callback:
    """Base class of callbacks, with Keras's hooks (all no-ops here).

    Every hook receives a dict of logs (empty when there is nothing to
    report). ``fit`` also calls the ``on_test_*`` hooks around its
    validation pass, as Keras does.

    Attributes:
        model: the model being trained (set by the loop through ``set_model``).
        params: ``{"verbose", "epochs", "steps"}`` (set through ``set_params``).
    """

    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_train_begin(self, logs=None): pass  # noqa: E704
    def on_train_end(self, logs=None): pass  # noqa: E704
    def on_epoch_begin(self, epoch, logs=None): pass  # noqa: E704
    def on_epoch_end(self, epoch, logs=None): pass  # noqa: E704
    def on_train_batch_begin(self, batch, logs=None): pass  # noqa: E704
    def on_train_batch_end(self, batch, logs=None): pass  # noqa: E704
    def on_test_begin(self, logs=None): pass  # noqa: E704
    def on_test_end(self, logs=None): pass  # noqa: E704
    def on_test_batch_begin(self, batch, logs=None): pass  # noqa: E704
    def on_test_batch_end(self, batch, logs=None): pass  # noqa: E704
    def on_predict_begin(self, logs=None): pass  # noqa: E704
    def on_predict_end(self, logs=None): pass  # noqa: E704
    def on_predict_batch_begin(self, batch, logs=None): pass  # noqa: E704
    def on_predict_batch_end(self, batch, logs=None): pass  # noqa: E704


_HOOKS = [name for name in vars(Callback) if name.startswith("on_")]


class CallbackList(Callback):
    """Calls each hook on every callback in order."""

    def __init__(self, callbacks=None, model=None, **params):
        super().__init__()
        self.callbacks = list(callbacks or [])
        for callback in self.callbacks:
            if not isinstance(callback, Callback):
                raise TypeError(f"callbacks must be Callback instances, received {type(callback).__name__}.")
        if model is not None:
            self.set_model(model)
        if params:
            self.set_params(params)

    def append(self, callback):
        self.callbacks.append(callback)
        if self.model is not None:
            callback.set_model(self.model)
        if self.params:
            callback.set_params(self.params)

    def set_model(self, model):
        super().set_model(model)
        for callback in self.callbacks:
            callback.set_model(model)

    def set_params(self, params):
        super().set_params(params)
        for callback in self.callbacks:
            callback.set_params(params)


def _dispatch(name):
    """A CallbackList hook calling ``name`` on every callback, always with a
    logs dict (Keras passes ``{}``, never None)."""
    indexed = "batch" in name or "epoch" in name

    if indexed:
        def hook(self, index, logs=None):
            logs = {} if logs is None else logs
            for callback in self.callbacks:
                getattr(callback, name)(index, logs)
    else:
        def hook(self, logs=None):
            logs = {} if logs is None else logs
            for callback in self.callbacks:
                getattr(callback, name)(logs)

    hook.__name__ = name
    return hook


for _name in _HOOKS:
    setattr(CallbackList, _name, _dispatch(_name))
