"""Sequence: a dataset object that yields whole batches by index."""


class Sequence:
    """Base for batch-producing datasets, like ``keras.utils.Sequence``.

    Implement ``__len__`` (batches per epoch) and ``__getitem__(index)``
    returning ``(x, y)`` or ``(x, y, sample_weight)``; ``on_epoch_end`` is
    called after every epoch (e.g. to reshuffle).
    """

    def __len__(self):
        raise NotImplementedError

    def __getitem__(self, index):
        raise NotImplementedError

    def on_epoch_end(self):
        pass
