"""SwapEMAWeights: evaluate and predict with the optimizer's moving averages."""
from minikeras.callbacks.callback import Callback


class SwapEMAWeights(Callback):
    """Swap the model's weights with the optimizer's exponential moving
    averages (``use_ema=True``) for evaluation and prediction, and back
    after, so that validation reports the averaged model while training
    goes on with the raw weights.

    Args:
        swap_on_epoch: also swap at the end of every epoch (and back at the
            start of the next), so that checkpoints written by later
            callbacks hold the averages; after the last epoch the averages
            stay in the model.

    Unlike Keras 3.15, whose ``on_predict_end`` tests the wrong flag and so
    leaves the averages in the model after ``predict``, the raw weights
    come back after predict as after evaluate.

    Raises:
        ValueError: the model's optimizer does not keep moving averages.

    Example:
        >>> model.compile(optimizer=SGD(use_ema=True), loss="mse")  # doctest: +SKIP
        >>> model.fit(x, y, validation_data=(xv, yv), callbacks=[SwapEMAWeights()])  # doctest: +SKIP
    """

    def __init__(self, swap_on_epoch=False):
        super().__init__()
        self.swap_on_epoch = swap_on_epoch
        self._ema_weights_in_model = False

    def _optimizer(self):
        optimizer = getattr(self.model.optimizer, "inner_optimizer", self.model.optimizer)
        if not getattr(optimizer, "use_ema", False):
            raise ValueError(f"SwapEMAWeights must be used when `use_ema=True` is set on the optimizer. Received: "
                             f"use_ema={getattr(optimizer, 'use_ema', None)}")
        return optimizer

    def _swap_variables(self):
        optimizer = self._optimizer()
        if not optimizer.built:  # nothing averaged yet (e.g. predict before any training)
            return False
        for variable, average in zip(optimizer._trainable_variables, optimizer._moving_averages):
            with variable.device.activate():
                held = variable.data.copy()
                variable.data[...] = average
                average[...] = held
        return True

    def _finalize_ema_values(self):
        optimizer = self._optimizer()
        for variable, average in zip(optimizer._trainable_variables, optimizer._moving_averages):
            with variable.device.activate():
                average[...] = variable.data

    def _swap_in(self):
        if not self._ema_weights_in_model and self._swap_variables():
            self._ema_weights_in_model = True

    def _swap_out(self):
        if self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = False

    def on_epoch_begin(self, epoch, logs=None):
        if self.swap_on_epoch:
            self._swap_out()

    def on_epoch_end(self, epoch, logs=None):
        if self.swap_on_epoch and not self._ema_weights_in_model:
            self._swap_in()
            if epoch == self.params.get("epochs", 0) - 1:
                self._finalize_ema_values()

    def on_test_begin(self, logs=None):
        self._swap_in()

    def on_test_end(self, logs=None):
        self._swap_out()

    def on_predict_begin(self, logs=None):
        self._swap_in()

    def on_predict_end(self, logs=None):
        self._swap_out()
