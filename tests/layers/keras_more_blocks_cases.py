"""Layer cases of issue 25's second batch (ConvLSTM, Conv3DTranspose,
Hashing, HashedCrossing, the spectrograms, EinsumDense's LoRA) recorded
from Keras 3.15 for forward parity.

Run ``/work/side/bin/python -m tests.layers.keras_more_blocks_cases`` from
the repository root (TensorFlow/Keras 3 installed) to rewrite
``fixtures/keras_more_blocks_outputs.npz`` (outputs on copied weights) and
``fixtures/keras_more_blocks_configs.json`` (Keras's get_config). Same case
format as ``keras_layer_cases.py``: name -> (class name, config, input,
call kwargs).
"""
import json
import os

import numpy

from tests.layers.keras_blocks_layer_cases import _plain, build_layer
from tests.layers.keras_layer_cases import _normal, call_case, case_weights

LORA_MODEL = os.path.join(os.path.dirname(__file__), "fixtures", "keras_lora_model")
FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_more_blocks_outputs.npz")
CONFIGS = os.path.join(os.path.dirname(__file__), "fixtures", "keras_more_blocks_configs.json")

_FRAMES_1D, _FRAMES_2D = _normal(300, (2, 3, 7, 2)), _normal(301, (2, 3, 5, 4, 2))
_FRAMES_3D = _normal(302, (1, 2, 3, 4, 3, 2))
_STEP_MASK = numpy.array([[1, 1, 0], [1, 0, 1]], bool)
CASES = {
    "conv_lstm1d": ("ConvLSTM1D", {"filters": 3, "kernel_size": 3}, _FRAMES_1D, {}),
    "conv_lstm1d_same_strided_sequences": ("ConvLSTM1D", {"filters": 2, "kernel_size": 2, "strides": 2,
                                                          "padding": "same", "return_sequences": True},
                                           _FRAMES_1D, {}),
    "conv_lstm2d": ("ConvLSTM2D", {"filters": 3, "kernel_size": (3, 2)}, _FRAMES_2D, {}),
    "conv_lstm2d_same_backwards_state": ("ConvLSTM2D", {"filters": 2, "kernel_size": 3, "padding": "same",
                                                        "go_backwards": True, "return_state": True},
                                         _FRAMES_2D, {"__output__": 2}),
    "conv_lstm2d_dilated_no_bias_relu": ("ConvLSTM2D", {"filters": 2, "kernel_size": 2, "dilation_rate": 2,
                                                        "use_bias": False, "activation": "relu",
                                                        "return_sequences": True}, _FRAMES_2D, {}),
    "conv_lstm2d_masked": ("ConvLSTM2D", {"filters": 2, "kernel_size": 2, "return_sequences": True},
                           _FRAMES_2D, {"mask": _STEP_MASK}),
    "conv_lstm3d": ("ConvLSTM3D", {"filters": 2, "kernel_size": 2, "padding": "same"}, _FRAMES_3D, {}),
}

_VOL = _normal(303, (2, 2, 3, 4, 3))
CASES.update({
    "conv3d_transpose": ("Conv3DTranspose", {"filters": 2, "kernel_size": 3}, _VOL, {}),
    "conv3d_transpose_strided_same": ("Conv3DTranspose", {"filters": 3, "kernel_size": (2, 3, 2),
                                                          "strides": (2, 1, 2), "padding": "same",
                                                          "activation": "relu"}, _VOL, {}),
    "conv3d_transpose_output_padding": ("Conv3DTranspose", {"filters": 2, "kernel_size": 3, "strides": 2,
                                                            "output_padding": (1, 0, 1), "use_bias": False},
                                        _VOL, {}),
})

_WORDS = numpy.array([["A"], ["B"], ["C"], ["D"], ["E"], [""], ["héllo wörld"],
                      ["a string of more than sixty-four bytes, so that FarmHash runs its block loop"]])
_INTS = numpy.array([[0, 7, -3], [123456789012, 42, 7]], "int64")
_FLOATS = numpy.array([[1.7, -2.5, 0.2], [3.0, 1e6, -0.9]], "float32")
_WORD_ROWS = numpy.array([["A", "B", "A"], ["C", "", "D"]])
CASES.update({
    "hashing_strings": ("Hashing", {"num_bins": 3}, _WORDS, {}),
    "hashing_strings_many_bins": ("Hashing", {"num_bins": 1000003}, _WORDS, {}),
    "hashing_strings_mask_salt": ("Hashing", {"num_bins": 5, "mask_value": "", "salt": 133}, _WORDS, {}),
    "hashing_ints_salt_pair": ("Hashing", {"num_bins": 97, "salt": [1, 2]}, _INTS, {}),
    "hashing_ints_mask": ("Hashing", {"num_bins": 11, "mask_value": 7}, _INTS, {}),
    "hashing_floats": ("Hashing", {"num_bins": 1009}, _FLOATS, {}),
    "hashing_one_hot": ("Hashing", {"num_bins": 4, "output_mode": "one_hot"}, _WORDS, {}),
    "hashing_multi_hot": ("Hashing", {"num_bins": 5, "output_mode": "multi_hot", "salt": 9}, _WORD_ROWS, {}),
    "hashing_count_int32": ("Hashing", {"num_bins": 3, "output_mode": "count"}, _WORD_ROWS, {}),
    "hashing_int32": ("Hashing", {"num_bins": 50, "dtype": "int32"}, _INTS, {}),
})

_AUDIO = _normal(320, (2, 40, 2))
_WAVE = (numpy.sin(numpy.arange(600) * 0.3)[None] * numpy.array([[1.0], [0.2]]) + _normal(321, (2, 600), 0.1))
_WAVE = _WAVE.astype("float32")
CASES.update({
    "stft_log": ("STFTSpectrogram", {"frame_length": 16, "frame_step": 8}, _AUDIO, {}),
    "stft_magnitude_same_expand": ("STFTSpectrogram", {"mode": "magnitude", "frame_length": 12, "frame_step": 5,
                                                       "fft_length": 16, "padding": "same", "expand_dims": True},
                                   _AUDIO, {}),
    "stft_psd_spectrum_periodic": ("STFTSpectrogram", {"mode": "psd", "frame_length": 8, "scaling": "spectrum",
                                                       "periodic": True, "window": "hamming"}, _AUDIO, {}),
    "stft_real": ("STFTSpectrogram", {"mode": "real", "frame_length": 8, "frame_step": 4, "window": None},
                  _AUDIO, {}),
    "stft_angle": ("STFTSpectrogram", {"mode": "angle", "frame_length": 8, "scaling": None}, _AUDIO, {}),
    "stft_stft_expand": ("STFTSpectrogram", {"mode": "stft", "frame_length": 8, "frame_step": 3,
                                             "expand_dims": True}, _AUDIO, {}),
    "mel_db": ("MelSpectrogram", {"fft_length": 64, "sequence_stride": 32, "num_mel_bins": 10,
                                  "sampling_rate": 8000}, _WAVE, {}),
    "mel_power_hamming": ("MelSpectrogram", {"fft_length": 64, "sequence_stride": 20, "sequence_length": 48,
                                             "num_mel_bins": 8, "window": "hamming", "power_to_db": False,
                                             "mag_exp": 1.0, "min_freq": 100.0, "max_freq": 3000}, _WAVE, {}),
    "mel_db_top_ref": ("MelSpectrogram", {"fft_length": 32, "sequence_stride": 16, "num_mel_bins": 6,
                                          "top_db": 20.0, "ref_power": 0.5, "sampling_rate": 4000}, _WAVE[0], {}),
})

_TOKENS_IN = _normal(330, (2, 4, 5))
CASES.update({
    "einsum_dense_lora": ("EinsumDense", {"equation": "abc,cde->abde", "output_shape": (None, 2, 3),
                                          "bias_axes": "de", "lora_rank": 2}, _TOKENS_IN, {}),
    "einsum_dense_lora_alpha": ("EinsumDense", {"equation": "ab,bc->ac", "output_shape": 4, "lora_rank": 3,
                                                "lora_alpha": 1.5, "activation": "relu"}, _TOKENS_IN[:, 0], {}),
    "dense_lora": ("Dense", {"units": 3, "lora_rank": 2, "lora_alpha": 4}, _TOKENS_IN, {}),
})

_IDS_A = numpy.array([1, -5, 123456789012, 0, 7], "int64")
_WORDS_B = numpy.array(["x", "hello world", "", "a string longer than sixty-four bytes for the block loop!!!!", "x"])
CASES.update({
    "hashed_crossing_int_string": ("HashedCrossing", {"num_bins": 7}, {"args": [[_IDS_A, _WORDS_B]]}, {}),
    "hashed_crossing_column_one_hot": ("HashedCrossing", {"num_bins": 4, "output_mode": "one_hot"},
                                       {"args": [[_WORDS_B[:, None], _IDS_A[:, None]]]}, {}),
    "hashed_crossing_three_many_bins": ("HashedCrossing", {"num_bins": 1000003},
                                        {"args": [[_IDS_A, _IDS_A * 3, _WORDS_B]]}, {}),
})

_VOCAB_WORDS = ["cat", "dog", "bird"]
_LOOKUP_WORDS = numpy.array([["cat", "fish", "emu"], ["dog", "yak", "a word that is longer than sixteen bytes"]])
_LOOKUP_IDS = numpy.array([[3, 99, 12], [7, -4, 123456]], "int64")
CASES.update({
    "string_lookup_oov_hashed": ("StringLookup", {"vocabulary": _VOCAB_WORDS, "num_oov_indices": 3},
                                 _LOOKUP_WORDS, {}),
    "string_lookup_oov_salted_masked": ("StringLookup", {"vocabulary": _VOCAB_WORDS, "num_oov_indices": 4,
                                                         "mask_token": "", "salt": [5, 8]}, _LOOKUP_WORDS, {}),
    "integer_lookup_farmhash": ("IntegerLookup", {"vocabulary": [3, 7, 12], "num_oov_indices": 5,
                                                  "oov_method": "farmhash"}, _LOOKUP_IDS, {}),
    "integer_lookup_farmhash_salt": ("IntegerLookup", {"vocabulary": [3, 7], "num_oov_indices": 3,
                                                       "oov_method": "farmhash", "salt": 17}, _LOOKUP_IDS, {}),
    "integer_lookup_floormod": ("IntegerLookup", {"vocabulary": [3, 7], "num_oov_indices": 3}, _LOOKUP_IDS, {}),
})

_rng = numpy.random.default_rng(310)
#: Byte strings of every FarmHash length class (0-16, 17-32, 33-64, the 64-byte loop) for the hash fixtures.
HASH_STRINGS = [bytes(_rng.integers(0, 256, n, dtype=numpy.uint8)) for n in list(range(0, 130)) + [255, 256, 1000]]


def hash_fixtures():
    """TensorFlow's fast and strong (key (133, 2**63 - 5)) buckets of HASH_STRINGS."""
    import tensorflow as tf

    buckets = (1 << 62) + 12345
    return {"hash/fast": tf.strings.to_hash_bucket_fast(HASH_STRINGS, buckets).numpy(),
            "hash/strong": tf.strings.to_hash_bucket_strong(HASH_STRINGS, buckets, key=[133, 2**63 - 5]).numpy()}


#: Layers whose Keras-initialised weights are the fixture (their initializer is the thing to check).
KEEP_KERAS_WEIGHTS = ("STFTSpectrogram",)


def keras_output(name):
    """Run one case in Keras: (output, weights, config)."""
    import keras

    class_name, config, inputs, call_kwargs = CASES[name]
    layer = build_layer(keras.layers, class_name, config)
    call_case(layer, inputs, call_kwargs)
    if class_name in KEEP_KERAS_WEIGHTS:
        weights = [numpy.asarray(w) for w in layer.get_weights()]
    else:
        weights = case_weights(name, [tuple(w.shape) for w in layer.weights])
    layer.set_weights(weights)
    return numpy.asarray(call_case(layer, inputs, call_kwargs)), weights, layer.get_config()


def lora_model(module):
    """Dense and EinsumDense with LoRA on, in ``module`` (keras or minikeras)."""
    return module.Sequential([module.layers.Input((5,)), module.layers.Dense(4, lora_rank=2),
                              module.layers.EinsumDense("ab,bc->ac", 3, bias_axes="c", lora_rank=2, lora_alpha=1.0)])


def save_lora_model():
    """Keras's files of :func:`lora_model` with trained-looking (nonzero) adapters, and its output."""
    import keras

    model = lora_model(keras)
    model.set_weights(case_weights("lora_model", [tuple(w.shape) for w in model.weights]))
    x = _normal(331, (3, 5))
    model.save(LORA_MODEL + ".keras")
    model.save_weights(LORA_MODEL + ".weights.h5")
    numpy.savez(LORA_MODEL + ".npz", x=x, y=numpy.asarray(model(x)))


#: Small models of the new layers whose files must move both ways: name -> (build(module), input shape).
INTEROP_MODELS = {
    "conv_lstm2d": (lambda m: m.Sequential([m.layers.Input((3, 5, 4, 2)), m.layers.ConvLSTM2D(3, 2, padding="same"),
                                            m.layers.Flatten()]), (2, 3, 5, 4, 2)),
    "conv_lstm3d": (lambda m: m.Sequential([m.layers.Input((2, 2, 3, 4, 1)),
                                            m.layers.ConvLSTM3D(2, 2, return_sequences=True),
                                            m.layers.Flatten()]), (1, 2, 2, 3, 4, 1)),
    "conv3d_transpose": (lambda m: m.Sequential([m.layers.Input((2, 3, 2, 3)),
                                                 m.layers.Conv3DTranspose(2, 2, strides=2, padding="same")]),
                         (1, 2, 3, 2, 3)),
    "lora": (lora_model, (3, 5)),
    "stft": (lambda m: m.Sequential([m.layers.Input((32, 1)), m.layers.STFTSpectrogram(frame_length=8)]), (2, 32, 1)),
}
#: Those whose Keras-written files are recorded (LoRA's are keras_lora_model.*).
RECORDED_INTEROP = sorted(set(INTEROP_MODELS) - {"lora"})


def interop_files(name):
    """Paths of Keras's recorded files of INTEROP_MODELS[name]: (.keras, .weights.h5, .npz with x and y)."""
    stem = os.path.join(os.path.dirname(__file__), "fixtures", "keras_interop", name)
    return stem + ".keras", stem + ".weights.h5", stem + ".npz"


def save_interop_models():
    import keras

    for name in RECORDED_INTEROP:
        build, shape = INTEROP_MODELS[name]
        model = build(keras)
        model.set_weights(case_weights(name, [tuple(w.shape) for w in model.weights]))
        x = _normal(340, shape)
        keras_file, weights_file, arrays = interop_files(name)
        os.makedirs(os.path.dirname(keras_file), exist_ok=True)
        model.save(keras_file)
        model.save_weights(weights_file)
        numpy.savez(arrays, x=x, y=numpy.asarray(model(x)))


def main():
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    arrays, configs = {}, {}
    for name in CASES:
        output, weights, config = keras_output(name)
        arrays[f"{name}/output"] = output
        for index, weight in enumerate(weights):
            arrays[f"{name}/weight{index}"] = weight
        configs[name] = _plain({key: value for key, value in config.items() if key not in ("name", "dtype")})
    arrays.update(hash_fixtures())
    numpy.savez_compressed(FIXTURE, **arrays)
    with open(CONFIGS, "w") as handle:
        json.dump(configs, handle, indent=1, sort_keys=True)
    save_lora_model()
    save_interop_models()
    print(f"wrote {len(CASES)} cases to {FIXTURE}")


if __name__ == "__main__":
    main()
