"""History: records the logs of every epoch; ``fit`` returns it."""
from minikeras.callbacks.callback import Callback


class History(Callback):
    """``history.history["loss"]`` is the list of epoch losses, and so on.

    Attributes:
        epoch: the epochs seen.
        history: ``{metric name: [value per epoch]}``.
    """

    def __init__(self):
        super().__init__()
        self.epoch = []
        self.history = {}

    def on_train_begin(self, logs=None):
        self.epoch = []
        self.history = {}

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)
        if self.model is not None:
            self.model.history = self
