"""Layer cases of issue 25 recorded from Keras 3.15 for forward parity.

Run ``/work/side/bin/python -m tests.layers.keras_blocks_layer_cases`` from
the repository root (TensorFlow/Keras 3 installed) to rewrite
``fixtures/keras_blocks_layer_outputs.npz`` (outputs on copied weights) and
``fixtures/keras_blocks_layer_configs.json`` (Keras's get_config).
Same case format as ``keras_layer_cases.py``.
"""
import json
import os

import numpy

from tests.layers.keras_layer_cases import _cell, _normal, call_case, case_weights

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_blocks_layer_outputs.npz")
CONFIGS = os.path.join(os.path.dirname(__file__), "fixtures", "keras_blocks_layer_configs.json")

_SEQ, _IMG, _VOL = _normal(250, (2, 7, 3)), _normal(251, (2, 5, 4, 3), 1.5, 0.5), _normal(252, (2, 3, 4, 5, 2))
# name: (class name, config, input, call kwargs)
CASES = {
    "identity": ("Identity", {}, _SEQ, {}),
    "rms_norm": ("RMSNormalization", {}, _IMG, {}),
    "rms_norm_axes": ("RMSNormalization", {"axis": [-2, -1], "epsilon": 1e-3}, _IMG, {}),
    "unit_norm": ("UnitNormalization", {}, _IMG, {}),
    "unit_norm_axes": ("UnitNormalization", {"axis": [1, 2]}, _IMG, {}),
    "alpha_dropout_inference": ("AlphaDropout", {"rate": 0.3}, _SEQ, {}),
    "zero_padding3d": ("ZeroPadding3D", {"padding": ((1, 0), (0, 2), (1, 1))}, _VOL, {}),
    "zero_padding3d_int": ("ZeroPadding3D", {"padding": 1}, _VOL, {}),
    "cropping3d": ("Cropping3D", {"cropping": ((1, 0), (0, 2), (1, 1))}, _VOL, {}),
    "cropping3d_int": ("Cropping3D", {"cropping": 1}, _VOL, {}),
    "upsampling3d": ("UpSampling3D", {"size": (2, 1, 3)}, _VOL, {}),
    "global_avg_pool3d": ("GlobalAveragePooling3D", {}, _VOL, {}),
    "global_max_pool3d_keepdims": ("GlobalMaxPooling3D", {"keepdims": True}, _VOL, {}),
    "conv1d_transpose": ("Conv1DTranspose", {"filters": 4, "kernel_size": 3, "strides": 2}, _SEQ, {}),
    "conv1d_transpose_same_output_padding": ("Conv1DTranspose", {"filters": 2, "kernel_size": 4, "strides": 3,
                                                                 "padding": "same", "output_padding": 1,
                                                                 "activation": "relu"}, _SEQ, {}),
    "depthwise_conv1d": ("DepthwiseConv1D", {"kernel_size": 3, "depth_multiplier": 2}, _SEQ, {}),
    "depthwise_conv1d_same_strided": ("DepthwiseConv1D", {"kernel_size": 2, "strides": 2, "padding": "same"},
                                      _SEQ, {}),
    "separable_conv1d": ("SeparableConv1D", {"filters": 5, "kernel_size": 3, "depth_multiplier": 2}, _SEQ, {}),
    "separable_conv1d_same_dilated": ("SeparableConv1D", {"filters": 2, "kernel_size": 2, "padding": "same",
                                                          "dilation_rate": 2, "use_bias": False}, _SEQ, {}),
}

_Q, _KV = _normal(253, (2, 5, 6)), _normal(254, (2, 7, 6))
_KV_MASK = numpy.array([[1, 1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1]], bool)
CASES.update({
    "einsum_dense_matrix": ("EinsumDense", {"equation": "ab,bc->ac", "output_shape": 4, "bias_axes": "c"},
                            _normal(255, (3, 5)), {}),
    "einsum_dense_heads": ("EinsumDense", {"equation": "abc,cde->abde", "output_shape": (None, 2, 3),
                                           "bias_axes": "de", "activation": "tanh"}, _SEQ, {}),
    "einsum_dense_left_ellipsis": ("EinsumDense", {"equation": "...b,bc->...c", "output_shape": 4}, _IMG, {}),
    "einsum_dense_right_ellipsis": ("EinsumDense", {"equation": "ab...,bc->ac...", "output_shape": 2,
                                                    "bias_axes": "c"}, _SEQ, {}),
    "gqa_self": ("GroupQueryAttention", {"head_dim": 3, "num_query_heads": 4, "num_key_value_heads": 2},
                 {"args": [_Q, _Q]}, {}),
    "gqa_cross_masked": ("GroupQueryAttention", {"head_dim": 2, "num_query_heads": 6, "num_key_value_heads": 3},
                         {"args": [_Q, _KV]}, {"value_mask": _KV_MASK}),
    "gqa_causal_gate_no_bias": ("GroupQueryAttention", {"head_dim": 3, "num_query_heads": 2,
                                                        "num_key_value_heads": 1, "use_gate": True,
                                                        "use_bias": False}, {"args": [_Q, _Q]},
                                {"use_causal_mask": True}),
    "gqa_sliding_window_scores": ("GroupQueryAttention", {"head_dim": 2, "num_query_heads": 4,
                                                          "num_key_value_heads": 2, "sliding_window": 2},
                                  {"args": [_Q, _KV, _KV * 0.5]}, {"return_attention_scores": True,
                                                                   "__output__": 1}),
    "gqa_sliding_window_output": ("GroupQueryAttention", {"head_dim": 2, "num_query_heads": 4,
                                                          "num_key_value_heads": 4, "sliding_window": 3},
                                  {"args": [_Q, _KV]}, {"use_causal_mask": True}),
})

_QM = numpy.array([[1, 1, 1, 0, 1], [1, 1, 1, 1, 1]], bool)
CASES.update({
    "additive_attention": ("AdditiveAttention", {}, [_Q, _KV], {}),
    "additive_attention_key_masked": ("AdditiveAttention", {}, [_Q, _KV, _KV * 0.3], {"mask": [_QM, _KV_MASK]}),
    "additive_attention_unscaled_causal": ("AdditiveAttention", {"use_scale": False}, [_Q, _Q],
                                           {"use_causal_mask": True}),
    "additive_attention_scores": ("AdditiveAttention", {}, [_Q, _KV], {"return_attention_scores": True,
                                                                       "__output__": 1}),
})

_IDS = numpy.array([[0, 1, 3], [2, 2, 1], [3, 3, 3], [1, 0, 2]], "int32")
_VALUES = _normal(256, (4, 5), 2.0)
CASES.update({
    "category_one_hot": ("CategoryEncoding", {"num_tokens": 4, "output_mode": "one_hot"}, _IDS, {}),
    "category_one_hot_column": ("CategoryEncoding", {"num_tokens": 5, "output_mode": "one_hot"}, _IDS[:, :1], {}),
    "category_multi_hot": ("CategoryEncoding", {"num_tokens": 4}, _IDS, {}),
    "category_count_weighted": ("CategoryEncoding", {"num_tokens": 4, "output_mode": "count"}, _IDS,
                                {"count_weights": _normal(257, (4, 3))}),
    "category_count_vector": ("CategoryEncoding", {"num_tokens": 5, "output_mode": "count"}, _IDS[0], {}),
    "discretization_int": ("Discretization", {"bin_boundaries": [-1.0, 0.0, 0.5, 2.0]}, _VALUES, {}),
    "discretization_one_hot": ("Discretization", {"bin_boundaries": [-1.0, 0.0, 2.0], "output_mode": "one_hot"},
                               _VALUES, {}),
    "discretization_count": ("Discretization", {"bin_boundaries": [0.0, 1.0], "output_mode": "count"}, _VALUES, {}),
})

CASES.update({
    "adaptive_avg_1d": ("AdaptiveAveragePooling1D", {"output_size": 3}, _SEQ, {}),
    "adaptive_max_1d": ("AdaptiveMaxPooling1D", {"output_size": 4}, _SEQ, {}),
    "adaptive_avg_2d": ("AdaptiveAveragePooling2D", {"output_size": (2, 3)}, _IMG, {}),
    "adaptive_max_2d": ("AdaptiveMaxPooling2D", {"output_size": 3}, _IMG, {}),
    "adaptive_avg_3d": ("AdaptiveAveragePooling3D", {"output_size": (2, 3, 2)}, _VOL, {}),
    "adaptive_max_3d": ("AdaptiveMaxPooling3D", {"output_size": (3, 2, 4)}, _VOL, {}),
})

CASES.update({
    "spectral_norm_dense_training": ("SpectralNormalization", {"layer": _cell("Dense", units=4)}, _SEQ,
                                     {"training": True}),
    "spectral_norm_conv_three_iterations": ("SpectralNormalization", {"layer": _cell("Conv1D", filters=2,
                                                                                      kernel_size=3),
                                                                      "power_iterations": 3}, _SEQ,
                                            {"training": True}),
    "spectral_norm_inference": ("SpectralNormalization", {"layer": _cell("Dense", units=4)}, _SEQ, {}),
})

_TOKENS = numpy.array([[0, 3, 5, 1], [2, 2, 0, 4]], "int32")
CASES.update({
    "reversible_embedding_forward": ("ReversibleEmbedding", {"input_dim": 6, "output_dim": 3}, _TOKENS, {}),
    "reversible_embedding_reverse_tied": ("ReversibleEmbedding", {"input_dim": 6, "output_dim": 3}, _SEQ,
                                          {"reverse": True}),
    "reversible_embedding_reverse_untied_capped": ("ReversibleEmbedding", {"input_dim": 5, "output_dim": 3,
                                                                          "tie_weights": False,
                                                                          "logit_soft_cap": 0.5},
                                                   _SEQ, {"reverse": True}),
})

CASES.update({
    "pipeline_rescale_crop_pool": ("Pipeline", {"layers": [_cell("Rescaling", scale=0.5, offset=1.0),
                                                           _cell("CenterCrop", height=3, width=2),
                                                           _cell("GlobalAveragePooling2D")]}, _IMG, {}),
})

_STEPS = _normal(260, (3, 5, 3))
_STEP_MASK = numpy.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 0, 1, 1, 1]], bool)
CASES.update({
    "stacked_cells_lstm_gru": ("RNN", {"cell": _cell("StackedRNNCells", cells=[_cell("LSTMCell", units=4),
                                                                                _cell("GRUCell", units=2)]),
                                       "return_sequences": True}, _STEPS, {}),
    "stacked_cells_simple_masked": ("RNN", {"cell": _cell("StackedRNNCells", cells=[_cell("SimpleRNNCell", units=3),
                                                                                     _cell("SimpleRNNCell", units=2)])},
                                    _STEPS, {"mask": _STEP_MASK}),
})


def build_layer(module, class_name, config):
    """``module.<class_name>(**config)``, building nested layer specs (also in lists) first."""
    def built(value):
        if isinstance(value, dict) and "__layer__" in value:
            return build_layer(module, value["__layer__"], value["config"])
        if isinstance(value, list) and value and all(isinstance(v, dict) and "__layer__" in v for v in value):
            return [built(v) for v in value]
        return value

    return getattr(module, class_name)(**{key: built(value) for key, value in config.items()})

_RGB = (numpy.random.default_rng(258).uniform(0, 255, (2, 4, 5, 3))).astype("float32")
_UNIT = (numpy.random.default_rng(259).uniform(0.2, 0.7, (2, 4, 5, 3))).astype("float32")
CASES.update({
    "grayscale_always": ("RandomGrayscale", {"factor": 1.0}, _RGB, {"training": True}),
    "grayscale_inference": ("RandomGrayscale", {"factor": 1.0}, _RGB, {"training": False}),
    "invert_always": ("RandomInvert", {"factor": (1.0, 1.0)}, _RGB, {"training": True}),
    "invert_unit_range": ("RandomInvert", {"factor": (1.0, 1.0), "value_range": (0, 1)}, _UNIT,
                          {"training": True}),
    "auto_contrast": ("AutoContrast", {}, _RGB, {}),
    "auto_contrast_unit_range": ("AutoContrast", {"value_range": (0, 1)}, _UNIT, {}),
    "solarization_invert_all": ("Solarization", {}, _RGB, {"training": True}),
    "solarization_unit_range": ("Solarization", {"value_range": (0, 1)}, _UNIT, {"training": True}),
    "solarization_inference": ("Solarization", {"addition_factor": 0.5, "threshold_factor": 0.5}, _RGB,
                               {"training": False}),
    "posterization_4_bits": ("RandomPosterization", {"factor": (4, 4)}, _RGB, {"training": True}),
    "brightness_fixed": ("RandomBrightness", {"factor": (0.3, 0.3)}, _RGB, {"training": True}),
    "brightness_fixed_unit_darker": ("RandomBrightness", {"factor": (-0.4, -0.4), "value_range": (0, 1)}, _UNIT,
                                     {"training": True}),
    "posterization_2_bits_unit": ("RandomPosterization", {"factor": (2, 2), "value_range": (0, 1)}, _UNIT,
                                  {"training": True}),
})


def keras_output(name):
    """Run one case in Keras: (output, weights, config)."""
    import keras

    class_name, config, inputs, call_kwargs = CASES[name]
    layer = build_layer(keras.layers, class_name, config)
    call_case(layer, inputs, call_kwargs)
    weights = case_weights(name, [tuple(w.shape) for w in layer.weights])
    layer.set_weights(weights)
    return numpy.asarray(call_case(layer, inputs, call_kwargs)), weights, layer.get_config()


def _plain(value):
    """Tuples as lists, as a JSON round trip gives them."""
    return json.loads(json.dumps(value))


def main():
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    arrays, configs = {}, {}
    for name in CASES:
        output, weights, config = keras_output(name)
        arrays[f"{name}/output"] = output
        for index, weight in enumerate(weights):
            arrays[f"{name}/weight{index}"] = weight
        configs[name] = _plain({key: value for key, value in config.items() if key not in ("name", "dtype")})
    numpy.savez_compressed(FIXTURE, **arrays)
    with open(CONFIGS, "w") as handle:
        json.dump(configs, handle, indent=1, sort_keys=True)
    print(f"wrote {len(CASES)} cases to {FIXTURE}")


if __name__ == "__main__":
    main()
