"""``timeseries_dataset_from_array``: sliding windows over an array as a
batch source for ``fit``, with Keras's arguments, window positions and errors.

Window ``i`` starts at ``start_positions[i]`` (every ``sequence_stride``
steps, shuffled once with ``RandomState(seed)`` as Keras does) and takes
``sequence_length`` steps ``sampling_rate`` apart from
``data[start_index:end_index]``; its target is
``targets[start_index:][start]``. Windows are gathered when a batch is asked
for, so a long series is never copied ``sequence_length`` times.
"""
import numpy

from minikeras.utils.dataset_utils import FileDataset


def timeseries_dataset_from_array(data, targets, sequence_length, sequence_stride=1, sampling_rate=1, batch_size=128,
                                  shuffle=False, seed=None, start_index=None, end_index=None):
    """Batches of sliding windows (and their targets) over ``data``.

    Args:
        data: an array-like of timesteps (axis 0 is time).
        targets: one target per timestep (``targets[i]`` belongs to the
            window starting at ``i``), or None.
        sequence_length: timesteps per window.
        sequence_stride: steps between the starts of consecutive windows.
        sampling_rate: steps between the timesteps inside a window.
        batch_size: windows per batch (None: single windows).
        shuffle: shuffle the windows (and reshuffle every epoch).
        seed: the shuffling's seed.
        start_index, end_index: use only ``data[start_index:end_index]``.

    Returns:
        A ``FileDataset`` of ``(windows, targets)`` (or windows alone) batches;
        windows have shape ``(batch, sequence_length, ...)``.
    """
    data = numpy.asarray(data)
    if start_index:
        if start_index < 0:
            raise ValueError(f"`start_index` must be 0 or greater. Received: start_index={start_index}")
        if start_index >= len(data):
            raise ValueError(f"`start_index` must be lower than the length of the data. Received: "
                             f"start_index={start_index}, for data of length {len(data)}")
    if end_index:
        if start_index and end_index <= start_index:
            raise ValueError(f"`end_index` must be higher than `start_index`. Received: start_index={start_index}, "
                             f"and end_index={end_index} ")
        if end_index >= len(data):
            raise ValueError(f"`end_index` must be lower than the length of the data. Received: end_index={end_index}, "
                             f"for data of length {len(data)}")
        if end_index <= 0:
            raise ValueError(f"`end_index` must be higher than 0. Received: end_index={end_index}")
    for name, value in (("sampling_rate", sampling_rate), ("sequence_stride", sequence_stride)):
        if value <= 0:
            raise ValueError(f"`{name}` must be higher than 0. Received: {name}={value}")
        if value >= len(data):
            raise ValueError(f"`{name}` must be lower than the length of the data. Received: {name}={value}, for "
                             f"data of length {len(data)}")
    start_index = start_index or 0
    end_index = len(data) if end_index is None else end_index
    window_count = end_index - start_index - (sequence_length - 1) * sampling_rate
    if targets is not None:
        targets = numpy.asarray(targets)
        window_count = min(window_count, len(targets))
    starts = numpy.arange(0, max(window_count, 0), sequence_stride)
    if shuffle:
        seed = numpy.random.randint(1e6) if seed is None else seed
        numpy.random.RandomState(seed).shuffle(starts)
    series = data[start_index:end_index]
    offsets = numpy.arange(sequence_length) * sampling_rate

    def load(window_starts):
        return series[numpy.asarray(window_starts)[:, None] + offsets]

    labels = None if targets is None else targets[start_index:][starts]
    return FileDataset(starts, load, labels, batch_size=batch_size, shuffle=shuffle, seed=seed)
