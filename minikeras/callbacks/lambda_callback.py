"""LambdaCallback: a callback made of plain functions."""
from minikeras.callbacks.callback import _HOOKS, Callback

# The hooks and the arguments the functions receive, as Keras documents them.
_WITH_INDEX = {name for name in _HOOKS if "epoch_" in name or "batch_" in name}
# Keras 2 names of the training batch hooks.
_ALIASES = {"on_batch_begin": "on_train_batch_begin", "on_batch_end": "on_train_batch_end"}


def _bind(function, with_index):
    # The loop may call a hook without logs; the functions always get them
    # (an empty dict), positionally, as Keras passes them.
    if with_index:
        def hook(index, logs=None):
            return function(index, {} if logs is None else logs)
    else:
        def hook(logs=None):
            return function({} if logs is None else logs)
    hook.__wrapped__ = function
    return hook


class LambdaCallback(Callback):
    """A callback built from functions, called at the matching hooks.

    Functions for epoch hooks take ``(epoch, logs)``, for batch hooks
    ``(batch, logs)``, for begin/end of train/test/predict ``(logs)``.

    Args:
        on_epoch_begin, on_epoch_end: called at the start/end of every epoch.
        on_batch_begin, on_batch_end: called around every training batch
            (Keras 2 names of ``on_train_batch_begin/end``).
        on_train_begin, on_train_end: called at the start/end of training.
        **kwargs: any other hook by name (``on_train_batch_end``,
            ``on_test_begin``, ``on_predict_batch_end``, ...).

    Raises:
        TypeError: a keyword that is not a hook, or a value that is not callable.

    Example:
        >>> log = []
        >>> callback = LambdaCallback(on_epoch_end=lambda epoch, logs: log.append(logs["loss"]))
        >>> model.fit(x, y, epochs=3, callbacks=[callback])  # doctest: +SKIP
    """

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_batch_begin=None, on_batch_end=None,
                 on_train_begin=None, on_train_end=None, **kwargs):
        super().__init__()
        functions = {
            "on_epoch_begin": on_epoch_begin, "on_epoch_end": on_epoch_end,
            "on_batch_begin": on_batch_begin, "on_batch_end": on_batch_end,
            "on_train_begin": on_train_begin, "on_train_end": on_train_end,
        }
        unknown = sorted(name for name in kwargs if name not in _HOOKS)
        if unknown:
            raise TypeError(f"LambdaCallback got unknown hook(s) {unknown}; the hooks are {sorted(_HOOKS)}.")
        functions.update(kwargs)
        for name, function in functions.items():
            if function is None:
                continue
            if not callable(function):
                raise TypeError(f"LambdaCallback: {name} must be callable, received {function!r}.")
            hook = _ALIASES.get(name, name)
            if hook in kwargs and name in _ALIASES:
                raise TypeError(f"LambdaCallback: both {name} and {hook} were given; pass only one.")
            setattr(self, hook, _bind(function, hook in _WITH_INDEX))
