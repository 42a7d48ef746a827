"""``audio_dataset_from_directory``: a folder of class subfolders of ``.wav``
files as batches of float32 audio ``(batch, samples, channels)``.

PCM WAV files (8, 16, 24 or 32 bits) are read with the standard library's
``wave`` module and scaled to [-1, 1) as ``tf.audio.decode_wav`` does.
Without ``output_sequence_length`` a batch is zero-padded to its longest
clip (Keras's ``padded_batch``); with it every clip is cut or padded to
that length. ``sampling_rate`` resamples clips recorded at another rate by
linear interpolation (Keras needs tensorflow-io for this).
"""
import numpy

from minikeras.utils import dataset_utils

ALLOWED_FORMATS = (".wav",)


def read_wav(path):
    """``(audio float32 (samples, channels), sample_rate)`` of a PCM WAV file."""
    import wave  # on first use: importing minikeras loads no audio module

    try:
        with wave.open(str(path), "rb") as handle:
            channels, width, rate = handle.getnchannels(), handle.getsampwidth(), handle.getframerate()
            frames = handle.readframes(handle.getnframes())
    except (wave.Error, EOFError) as error:
        raise ValueError(f"Could not read {path} as a PCM WAV file: {error}") from None
    raw = numpy.frombuffer(frames, dtype=numpy.uint8)
    if width == 1:
        audio = (raw.astype(numpy.float32) - 128.0) / 128.0
    elif width in (2, 4):
        audio = numpy.frombuffer(frames, dtype=f"<i{width}").astype(numpy.float32) / float(2 ** (8 * width - 1))
    elif width == 3:
        triples = raw.reshape(-1, 3).astype(numpy.int32)
        values = triples[:, 0] | (triples[:, 1] << 8) | (triples[:, 2] << 16)
        values = numpy.where(values >= 2 ** 23, values - 2 ** 24, values)
        audio = values.astype(numpy.float32) / float(2 ** 23)
    else:
        raise ValueError(f"{path}: {8 * width}-bit samples are not PCM WAV data this reader knows.")
    return audio.reshape(-1, channels), rate


def _resample(audio, rate, target_rate):
    if target_rate is None or rate == target_rate:
        return audio
    length = max(int(round(len(audio) * target_rate / rate)), 1)
    positions = numpy.arange(length) * (rate / target_rate)
    source = numpy.arange(len(audio))
    return numpy.stack([numpy.interp(positions, source, audio[:, c]) for c in range(audio.shape[1])],
                       axis=-1).astype(numpy.float32)


def _audio_loader(sampling_rate, output_sequence_length):
    def load(paths):
        clips = [_resample(*read_wav(path), sampling_rate) for path in paths]
        length = output_sequence_length or max(len(clip) for clip in clips)
        channels = {clip.shape[1] for clip in clips}
        if len(channels) != 1:
            raise ValueError(f"The clips of one batch have different channel counts {sorted(channels)}: "
                             f"{list(paths)}.")
        batch = numpy.zeros((len(clips), length, channels.pop()), dtype=numpy.float32)
        for row, clip in enumerate(clips):
            batch[row, :min(length, len(clip))] = clip[:length]
        return batch

    return load


def audio_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None, batch_size=32,
                                 sampling_rate=None, output_sequence_length=None, ragged=False, shuffle=True,
                                 seed=None, validation_split=None, subset=None, follow_links=False, verbose=True):
    """Batches of audio clips (and labels) from the ``.wav`` files of a directory.

    Args:
        directory, labels, label_mode, class_names, batch_size, shuffle,
        seed, validation_split, subset, follow_links, verbose: as in
            ``image_dataset_from_directory``.
        sampling_rate: resample every clip to this rate (None: keep each
            file's rate).
        output_sequence_length: cut or zero-pad every clip to this many
            samples (None: pad each batch to its longest clip).
        ragged: Keras's ragged batches need tf.RaggedTensor; refused.

    Returns:
        A ``FileDataset`` with ``class_names`` and ``file_paths`` (a pair with
        ``subset="both"``).
    """
    labels, label_mode = dataset_utils.check_label_mode(labels, label_mode, class_names)
    if ragged:
        raise ValueError("ragged=True needs tf.RaggedTensor, which minikeras does not have: leave ragged=False "
                         "(batches are zero-padded to their longest clip) or set output_sequence_length.")
    for name, value in (("sampling_rate", sampling_rate), ("output_sequence_length", output_sequence_length)):
        if value is not None and (not isinstance(value, int) or value <= 0):
            raise ValueError(f"`{name}` should be a positive integer or None. Received: {name}={value}")
    dataset_utils.check_validation_split_arg(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = numpy.random.randint(1e6)
    paths, labels, class_names = dataset_utils.index_directory(
        directory, labels, formats=ALLOWED_FORMATS, class_names=class_names, shuffle=shuffle, seed=seed,
        follow_links=follow_links, verbose=verbose)
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError(f'When passing `label_mode="binary"`, there must be exactly 2 class_names. Received: '
                         f"class_names={class_names}")

    def empty(what):
        return f"No {what}audio files found in directory {directory}. Allowed format(s): {ALLOWED_FORMATS}"

    return dataset_utils.datasets_for_subset(paths, labels, class_names, label_mode, validation_split, subset,
                                             _audio_loader(sampling_rate, output_sequence_length), batch_size,
                                             shuffle, seed, empty)
