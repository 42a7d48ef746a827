"""Trainer: compile/fit/evaluate/predict (being written)."""


class Trainer:
    """Training methods mixed into Model."""

    def _init_training(self):
        self.optimizer = None
        self.stop_training = False
