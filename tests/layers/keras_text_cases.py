"""Text preprocessing cases recorded from Keras 3 (StringLookup,
IntegerLookup, TextVectorization): vocabulary and outputs.

Run ``/work/side/bin/python -m tests.layers.keras_text_cases`` from the
repository root to rewrite ``fixtures/keras_text_outputs.json`` (JSON, so
strings need no pickling).
"""
import json
import os

import numpy

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_text_outputs.json")
CORPUS = ["The cat sat on the mat.", "The dog ate my homework!", "A cat, a dog; friends?", "the THE the"]
TEXTS = ["the cat and the dog", "Zebra's mat", ""]
TOKENS = ["a", "a", "b", "c", "c", "a", "d"]
TOKEN_INPUT = [["a", "b", "c", "a"], ["b", "a", "d", "z"]]
INTEGERS = [5, 5, 7, 9, 9, 9, 12]
INTEGER_INPUT = [[5, 0, 3, 4, 9], [12, 7, 7, 1, 2]]

# name: (class name, config, adapt data, call input)
CASES = {
    "text_default": ("TextVectorization", {}, CORPUS, TEXTS),
    "text_length": ("TextVectorization", {"output_sequence_length": 4}, CORPUS, TEXTS),
    "text_bigrams_capped": ("TextVectorization", {"ngrams": 2, "max_tokens": 12}, CORPUS, TEXTS),
    "text_multi_hot": ("TextVectorization", {"output_mode": "multi_hot"}, CORPUS, TEXTS),
    "text_count_trigrams": ("TextVectorization", {"output_mode": "count", "ngrams": [1, 3]}, CORPUS, TEXTS),
    "text_characters": ("TextVectorization", {"standardize": "lower", "split": "character",
                                              "output_sequence_length": 6}, CORPUS, TEXTS),
    "string_lookup": ("StringLookup", {}, TOKENS, TOKEN_INPUT),
    "string_lookup_mask": ("StringLookup", {"mask_token": ""}, TOKENS, TOKEN_INPUT),
    "string_lookup_multi_hot": ("StringLookup", {"output_mode": "multi_hot"}, TOKENS, TOKEN_INPUT),
    "string_lookup_count_max": ("StringLookup", {"output_mode": "count", "max_tokens": 3}, TOKENS, TOKEN_INPUT),
    "string_lookup_one_hot": ("StringLookup", {"output_mode": "one_hot"}, TOKENS, TOKEN_INPUT[0]),
    "integer_lookup": ("IntegerLookup", {}, INTEGERS, INTEGER_INPUT),
    "integer_lookup_buckets_mask": ("IntegerLookup", {"num_oov_indices": 2, "mask_token": 0}, INTEGERS,
                                    INTEGER_INPUT),
    "integer_lookup_multi_hot": ("IntegerLookup", {"output_mode": "multi_hot"}, INTEGERS, INTEGER_INPUT),
}


def _plain(value):
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8")
    return value.item() if hasattr(value, "item") else value


def main():
    import keras

    records = {"keras_version": keras.__version__}
    for name, (class_name, config, adapt_data, call_input) in CASES.items():
        config = {k: tuple(v) if isinstance(v, list) else v for k, v in config.items()}
        layer = getattr(keras.layers, class_name)(**config)
        layer.adapt(numpy.array(adapt_data))
        records[name] = {"vocabulary": _plain(list(layer.get_vocabulary())),
                         "output": numpy.asarray(layer(numpy.array(call_input))).tolist()}
    with open(FIXTURE, "w") as handle:
        json.dump(records, handle, indent=1)
    print(f"wrote {len(CASES)} cases to {FIXTURE} (Keras {keras.__version__})")


if __name__ == "__main__":
    main()
