"""Layer cases recorded from Keras 3 (tf.keras) for forward parity.

Each case names a ``keras.layers`` class, its constructor arguments (the
same names in minikeras), an input, and the weights to copy in. Run

    /work/side/bin/python -m tests.layers.keras_layer_cases

from the repository root (an environment with TensorFlow/Keras 3) to
rewrite ``fixtures/keras_layer_outputs.npz``; ``test_layer_keras_parity``
checks minikeras against that file without TensorFlow, and against live
Keras where it is installed.
"""
import json
import os

import numpy

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_layer_outputs.npz")


def _normal(seed, shape, scale=1.0, offset=0.0):
    return (numpy.random.default_rng(seed).normal(offset, scale, shape)).astype("float32")


def _ints(seed, shape, high):
    return numpy.random.default_rng(seed).integers(0, high, shape).astype("int32")


# name: (class name, config, input, call kwargs, weights seed or None)
CASES = {
    "softmax_axis1": ("Softmax", {"axis": 1}, _normal(1, (2, 3, 4), 2.0), {}),
    "relu_options": ("ReLU", {"max_value": 2.0, "negative_slope": 0.1, "threshold": 0.5},
                     _normal(2, (3, 6), 2.0), {}),
    "leaky_relu": ("LeakyReLU", {}, _normal(3, (3, 6), 2.0), {}),
    "prelu_shared": ("PReLU", {"shared_axes": [1, 2]}, _normal(4, (2, 3, 3, 4), 2.0), {}),
    "elu": ("ELU", {"alpha": 0.6}, _normal(5, (3, 6), 2.0), {}),
    "masking": ("Masking", {"mask_value": 0.5}, numpy.where(_normal(6, (3, 4, 1)) > 0, 0.5, _normal(7, (3, 4, 2))),
                {}),
    "rescaling": ("Rescaling", {"scale": 1 / 127.5, "offset": -1.0}, _ints(10, (2, 3, 3, 2), 256).astype("float32"),
                  {}),
    "resizing_bilinear": ("Resizing", {"height": 4, "width": 7}, _normal(11, (2, 6, 5, 3)), {}),
    "resizing_nearest_crop": ("Resizing", {"height": 3, "width": 6, "interpolation": "nearest",
                                           "crop_to_aspect_ratio": True}, _normal(12, (2, 6, 5, 3)), {}),
    "center_crop": ("CenterCrop", {"height": 3, "width": 2}, _normal(13, (2, 6, 5, 3)), {}),
    "center_crop_upsizes": ("CenterCrop", {"height": 8, "width": 4}, _normal(14, (2, 6, 5, 3)), {}),
    "normalization_fixed": ("Normalization", {"mean": [1.0, 2.0, -1.0], "variance": [4.0, 0.25, 1.0]},
                            _normal(15, (4, 3)), {}),
    "rotation_fixed_36deg": ("RandomRotation", {"factor": (0.1, 0.1)}, _normal(16, (2, 6, 5, 3)),
                             {"training": True}),
    "rotation_fixed_constant": ("RandomRotation", {"factor": (-0.3, -0.3), "fill_mode": "constant",
                                                  "fill_value": 0.5}, _normal(16, (2, 6, 5, 3)), {"training": True}),
    "zoom_fixed": ("RandomZoom", {"height_factor": (0.3, 0.3), "width_factor": (-0.2, -0.2)},
                   _normal(17, (2, 6, 5, 3)), {"training": True}),
    "zoom_fixed_nearest": ("RandomZoom", {"height_factor": (-0.4, -0.4), "interpolation": "nearest",
                                          "fill_mode": "wrap"}, _normal(17, (2, 6, 5, 3)), {"training": True}),
    "translation_fixed": ("RandomTranslation", {"height_factor": (0.25, 0.25), "width_factor": (-0.3, -0.3)},
                          _normal(18, (2, 6, 5, 3)), {"training": True}),
    "augmentation_inference": ("RandomRotation", {"factor": 0.4}, _normal(19, (2, 6, 5, 3)), {"training": False}),
}

# Padding masks: sample 0 keeps all, sample 1 has trailing padding, sample 2 holes.
_MASK = numpy.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [0, 1, 0, 1, 1]], bool)
for _class in ("SimpleRNN", "LSTM", "GRU"):
    for _backwards in (False, True):
        CASES[f"{_class.lower()}_masked{'_backwards' if _backwards else ''}"] = (
            _class, {"units": 4, "return_sequences": True, "go_backwards": _backwards},
            _normal(8, (3, 5, 3)), {"mask": _MASK})
    CASES[f"{_class.lower()}_masked_last"] = (_class, {"units": 4}, _normal(9, (3, 5, 3)), {"mask": _MASK})


def _cell(class_name, **config):
    return {"__layer__": class_name, "config": config}


for _cell_name in ("SimpleRNNCell", "LSTMCell", "GRUCell"):
    CASES[f"rnn_{_cell_name.lower()}"] = ("RNN", {"cell": _cell(_cell_name, units=4), "return_sequences": True},
                                         _normal(20, (3, 5, 3)), {})
    CASES[f"rnn_{_cell_name.lower()}_masked_backwards"] = (
        "RNN", {"cell": _cell(_cell_name, units=4), "go_backwards": True}, _normal(21, (3, 5, 3)), {"mask": _MASK})
CASES["rnn_lstm_cell_zero_output_for_mask"] = (
    "RNN", {"cell": _cell("LSTMCell", units=3), "return_sequences": True, "zero_output_for_mask": True},
    _normal(22, (3, 5, 3)), {"mask": _MASK})
CASES["gru_cell_reset_before"] = ("RNN", {"cell": _cell("GRUCell", units=3, reset_after=False)},
                                  _normal(23, (3, 5, 3)), {})


_Q, _V, _K = _normal(24, (2, 4, 5)), _normal(25, (2, 6, 5)), _normal(26, (2, 6, 5))
_VALUE_MASK = numpy.array([[1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 1]], bool)
CASES.update({
    "attention_dot": ("Attention", {}, [_Q, _V], {}),
    "attention_scaled_key_masked": ("Attention", {"use_scale": True}, [_Q, _V, _K],
                                    {"mask": [numpy.array([[1, 1, 0, 1], [1, 1, 1, 1]], bool), _VALUE_MASK]}),
    "attention_concat_causal": ("Attention", {"score_mode": "concat", "use_scale": True}, [_Q, _V],
                                {"use_causal_mask": True}),
    "attention_scores": ("Attention", {}, [_Q, _V], {"return_attention_scores": True, "__output__": 1}),
    "mha_self": ("MultiHeadAttention", {"num_heads": 2, "key_dim": 3}, {"args": [_Q, _Q]}, {}),
    "mha_cross_key_value_dim": ("MultiHeadAttention", {"num_heads": 3, "key_dim": 2, "value_dim": 4,
                                                       "output_shape": 7},
                                {"args": [_Q, _V, _K]}, {}),
    "mha_masks": ("MultiHeadAttention", {"num_heads": 2, "key_dim": 3}, {"args": [_Q, _V]},
                  {"value_mask": _VALUE_MASK,
                   "attention_mask": numpy.tril(numpy.ones((2, 4, 6), bool), k=1)}),
    "mha_causal_no_bias": ("MultiHeadAttention", {"num_heads": 2, "key_dim": 3, "use_bias": False},
                           {"args": [_Q, _Q]}, {"use_causal_mask": True}),
    "mha_scores": ("MultiHeadAttention", {"num_heads": 2, "key_dim": 3}, {"args": [_Q, _V]},
                   {"value_mask": _VALUE_MASK, "return_attention_scores": True, "__output__": 1}),
})


CASES.update({
    "group_norm_images": ("GroupNormalization", {"groups": 2}, _normal(27, (2, 3, 3, 4), 2.0, 1.0), {}),
    "group_norm_instance_axis1": ("GroupNormalization", {"groups": -1, "axis": 1, "epsilon": 0.01},
                                  _normal(28, (2, 3, 5), 2.0), {}),
    "group_norm_layer_like": ("GroupNormalization", {"groups": 1, "center": False}, _normal(29, (3, 6)), {}),
})


_VOLUME = _normal(30, (2, 5, 6, 4, 3))
CASES.update({
    "conv3d_valid": ("Conv3D", {"filters": 4, "kernel_size": (2, 3, 2)}, _VOLUME, {}),
    "conv3d_same_strided_relu": ("Conv3D", {"filters": 2, "kernel_size": 3, "strides": (2, 1, 2), "padding": "same",
                                            "activation": "relu"}, _VOLUME, {}),
    "conv3d_dilated_no_bias": ("Conv3D", {"filters": 2, "kernel_size": 2, "dilation_rate": (2, 1, 2),
                                          "use_bias": False}, _VOLUME, {}),
    "max_pool3d_same": ("MaxPooling3D", {"pool_size": (2, 3, 2), "padding": "same"}, _VOLUME, {}),
    "max_pool3d_strided": ("MaxPooling3D", {"pool_size": 2, "strides": 1}, _VOLUME, {}),
    "avg_pool3d_same": ("AveragePooling3D", {"pool_size": (3, 2, 3), "strides": (2, 2, 1), "padding": "same"},
                        _VOLUME, {}),
})


CASES.update({
    "bidirectional_masked_last": ("Bidirectional", {"layer": _cell("LSTM", units=3)}, _normal(31, (3, 5, 2)),
                                  {"mask": _MASK}),
    "bidirectional_masked_sequences": ("Bidirectional", {"layer": _cell("GRU", units=3, return_sequences=True)},
                                       _normal(31, (3, 5, 2)), {"mask": _MASK}),
})


def call_case(layer, inputs, call_kwargs):
    """Call ``layer`` as the case says; returns the chosen output."""
    kwargs = {key: value for key, value in call_kwargs.items() if key != "__output__"}
    args = inputs["args"] if isinstance(inputs, dict) else [inputs]
    output = layer(*args, **kwargs)
    if isinstance(output, (list, tuple)):
        output = output[call_kwargs.get("__output__", 0)]
    return output


def build_layer(module, class_name, config):
    """``module.<class_name>(**config)``, building nested layer specs first."""
    config = {key: build_layer(module, value["__layer__"], value["config"])
              if isinstance(value, dict) and "__layer__" in value else value
              for key, value in config.items()}
    return getattr(module, class_name)(**config)


def case_weights(name, shapes):
    """The weights copied into both layers: seeded normals of ``shapes``."""
    seed = sum(map(ord, name))
    return [_normal(seed + i, shape, 0.5) for i, shape in enumerate(shapes)]


def keras_output(name):
    """Run one case in Keras: (output, weights)."""
    import keras

    class_name, config, inputs, call_kwargs = CASES[name]
    layer = build_layer(keras.layers, class_name, config)
    call_case(layer, inputs, call_kwargs)
    weights = case_weights(name, [tuple(w.shape) for w in layer.weights])
    layer.set_weights(weights)
    return numpy.asarray(call_case(layer, inputs, call_kwargs)), weights


def main():
    arrays = {}
    for name in CASES:
        output, weights = keras_output(name)
        arrays[f"{name}/output"] = output
        for index, weight in enumerate(weights):
            arrays[f"{name}/weight{index}"] = weight
    import keras
    arrays["keras_version"] = numpy.array(keras.__version__)
    arrays["cases"] = numpy.array(json.dumps(sorted(CASES)))
    numpy.savez_compressed(FIXTURE, **arrays)
    print(f"wrote {len(CASES)} cases to {FIXTURE} (Keras {keras.__version__})")


if __name__ == "__main__":
    main()
