"""TerminateOnNaN: stop training as soon as the loss becomes NaN or infinite."""
import math
import sys

from minikeras.callbacks.callback import Callback


class TerminateOnNaN(Callback):
    """Stop training when a batch's loss is NaN or infinite (Keras semantics).

    Prints ``Batch N: Invalid loss, terminating training`` (N is the 0-based
    batch index within the epoch) and sets ``model.stop_training``; the loop
    stops right after that batch.

    Example:
        >>> model.fit(x, y, callbacks=[TerminateOnNaN()])  # doctest: +SKIP
    """

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is None:
            return
        if not math.isfinite(float(loss)):
            print(f"Batch {batch}: Invalid loss, terminating training", file=sys.stdout)
            self.model.stop_training = True
