"""Name coverage of Keras 3's ops namespaces (issue 24).

Keras's names (recorded by tests/ops/fixtures/make_keras_ops_names.py from
Keras 3.15) must all exist at the same path in minikeras, as functions,
except the names README's "keras.ops: names not supported" table lists with
a reason. Fails when a name goes missing (or when the table lists a name
that exists, so the table cannot go stale).
"""
import json
import os
import re
import types

import pytest

import minikeras as mk

HERE = os.path.dirname(os.path.abspath(__file__))
RECORD = json.load(open(os.path.join(HERE, "fixtures", "keras_ops_names.json")))
README = os.path.join(HERE, "..", "..", "README.md")
NAMESPACES = {
    "ops": lambda: mk.ops,
    "nn": lambda: mk.ops.nn,
    "image": lambda: mk.ops.image,
    "linalg": lambda: mk.ops.linalg,
    "numpy": lambda: mk.ops.numpy,
}

# Not yet built (the issue is open on these); each entry is work to do, not a
# design decision, so it is kept here rather than in README's table.
NOT_YET = set()


def _not_supported():
    text = open(README).read()
    section = text.split("## keras.ops: names not supported", 1)[1].split("\n## ", 1)[0]
    table = {}
    for row in re.findall(r"^\| `(\w+)` \| ([\w, ]+) \| (.+) \|$", section, re.M):
        name, namespaces, reason = row
        assert len(reason) > 40, f"README gives no real reason for {name}"
        for namespace in namespaces.split(","):
            table.setdefault(namespace.strip(), set()).add(name)
    return table


def _present(module, name):
    value = getattr(module, name, None)
    return callable(value) and not isinstance(value, types.ModuleType)


@pytest.mark.parametrize("namespace", sorted(NAMESPACES))
def test_every_keras_name_is_present_or_documented(namespace):
    module = NAMESPACES[namespace]()
    excluded = _not_supported().get(namespace, set())
    missing = [name for name in RECORD["namespaces"][namespace]
               if name not in excluded and (namespace, name) not in NOT_YET and not _present(module, name)]
    assert not missing, f"keras.ops.{namespace} names missing from minikeras: {missing}"
    stale = [name for name in excluded if _present(module, name)]
    assert not stale, f"README lists {stale} as not supported in {namespace}, but they exist"


def test_counts_cover_keras():
    table = _not_supported()
    for namespace, names in RECORD["namespaces"].items():
        module = NAMESPACES[namespace]()
        present = sum(_present(module, name) for name in names)
        assert present + len(table.get(namespace, ())) + sum(ns == namespace for ns, _ in NOT_YET) == len(names)


def test_keras_names_that_were_modules_are_functions_and_modules_still_import():
    # ops.array and ops.nn.softmax / ops.nn.conv used to be modules.
    import importlib

    assert callable(mk.ops.array) and mk.ops.array([1.0, 2.0]).dtype == "float32"
    assert callable(mk.ops.nn.softmax) and callable(mk.ops.nn.conv)
    assert importlib.import_module("minikeras.ops.nn.softmax").SparseSoftmaxCrossEntropy
    from minikeras.ops.array.padding import pad
    from minikeras.ops.nn.conv import conv_bias_relu  # noqa: F401

    assert pad is mk.ops.pad
    assert mk.ops.numpy.sum is mk.ops.sum and mk.ops.nn.relu is mk.ops.relu


def test_signatures_take_keras_argument_names():
    """Each function accepts Keras's parameter names (positional order and keywords)."""
    import inspect

    mismatched = []
    for namespace, names in RECORD["namespaces"].items():
        module = NAMESPACES[namespace]()
        for name, parameters in names.items():
            if not _present(module, name) or parameters is None:
                continue
            try:
                ours = inspect.signature(getattr(module, name)).parameters
            except (TypeError, ValueError):
                continue
            keras_names = [p[0] for p in parameters if "VAR" not in p[1]]
            our_names = [p for p, value in ours.items() if value.kind not in (value.VAR_POSITIONAL, value.VAR_KEYWORD)]
            if our_names[:len(keras_names)] != keras_names and not any(
                    value.kind == value.VAR_POSITIONAL for value in ours.values()):
                mismatched.append(f"{namespace}.{name}{tuple(our_names)} vs {tuple(keras_names)}")
    assert sorted(set(mismatched)) == sorted(SIGNATURES_DIFFERING), "\n".join(sorted(set(mismatched)))


# Existing ops whose signatures predate this issue and differ from Keras's
# (other workstreams own these modules); listed so the test catches new drift.
SIGNATURES_DIFFERING = []
