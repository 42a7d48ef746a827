"""Fingerprints of configs and saved files, to compare two trees byte for byte.

Issue 39 moves many modules; its constraint is that configs and saved files do
not change. Run this script in each tree (the same Python, the same NumPy) and
compare the two JSON files::

    (cd /path/base && python benchmarks/config_identity.py --out /tmp/base.json)
    (cd /path/new && python benchmarks/config_identity.py --out /tmp/new.json)
    python benchmarks/config_identity.py --compare /tmp/base.json /tmp/new.json

What is fingerprinted (sha256):
- every application in ``minikeras.applications`` built with ``weights=None``
  and no top at 75x75: its ``to_json()``; for eight of them also the members of
  the ``.keras`` file it saves (``config.json`` and the content of
  ``model.weights.h5``; ``metadata.json`` holds the date and is left out;
  weights come from a fixed seed);
- every ``.keras`` / ``.h5`` fixture under ``tests/saving/fixtures`` that loads
  in safe mode: its config after loading, and the members of the ``.keras``
  file it saves again.
"""

import argparse
import hashlib
import io
import json
import os
import sys
import tempfile
import zipfile

sys.path.insert(0, os.getcwd())

INPUT_SHAPE = (75, 75, 3)  # the smallest size every application accepts without its top
SAVED = ("MobileNet", "MobileNetV2", "MobileNetV3Small", "EfficientNetB0",
         "EfficientNetV2B0", "DenseNet121", "ResNet50", "ConvNeXtTiny")


def _digest(data):
    if isinstance(data, str):
        data = data.encode()
    return hashlib.sha256(data).hexdigest()


def _archive_digests(model, directory, name):
    path = os.path.join(directory, name + ".keras")
    model.save(path)
    digests = {}
    with zipfile.ZipFile(path) as archive:
        for member in sorted(archive.namelist()):
            if member == "metadata.json":
                continue
            data = archive.read(member)
            if member.endswith(".h5"):
                data = _h5_content(data)
            digests[member] = _digest(data)
    return digests


def _h5_content(data):
    """The h5 file's groups, attributes and dataset bytes (not its layout)."""
    import h5py

    lines = []
    with h5py.File(io.BytesIO(data), "r") as handle:
        def visit(name, item):
            attributes = sorted((key, repr(item.attrs[key])) for key in item.attrs)
            if isinstance(item, h5py.Dataset):
                value = item[()]
                lines.append(f"{name} {item.dtype} {item.shape} {attributes}")
                lines.append(_digest(value.tobytes() if hasattr(value, "tobytes") else repr(value)))
            else:
                lines.append(f"{name}/ {attributes}")
        handle.visititems(visit)
    return "\n".join(lines)


def fingerprints():
    import numpy as np
    import minikeras
    import minikeras.applications as applications

    result = {}
    with tempfile.TemporaryDirectory() as directory:
        for name in sorted(n for n in dir(applications) if n[:1].isupper()):
            minikeras.utils.set_random_seed(0)
            np.random.seed(0)
            model = getattr(applications, name)(
                weights=None, include_top=False, input_shape=INPUT_SHAPE)
            result[f"application/{name}/to_json"] = _digest(model.to_json())
            if name not in SAVED:
                continue
            for member, digest in _archive_digests(model, directory, name).items():
                result[f"application/{name}/{member}"] = digest
        root = os.path.join("tests", "saving", "fixtures")
        for folder, _, files in sorted(os.walk(root)):
            for file in sorted(files):
                if not file.endswith((".keras", ".h5")) or file.endswith(".weights.h5"):
                    continue
                path = os.path.join(folder, file)
                try:
                    model = minikeras.saving.load_model(path, safe_mode=True, compile=False)
                except Exception as error:  # a fixture that is meant to be refused
                    result[f"fixture/{path}/refused"] = type(error).__name__
                    continue
                result[f"fixture/{path}/config"] = _digest(
                    json.dumps(model.get_config(), sort_keys=True, default=repr))
                stem = file.replace(".", "_")
                for member, digest in _archive_digests(model, directory, stem).items():
                    result[f"fixture/{path}/{member}"] = digest
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the fingerprints here (JSON)")
    parser.add_argument("--compare", nargs=2, metavar=("BASE", "NEW"))
    args = parser.parse_args()
    if args.compare:
        base, new = (json.load(open(path)) for path in args.compare)
        differing = sorted(k for k in base.keys() | new.keys() if base.get(k) != new.get(k))
        print(f"{len(base)} fingerprints in base, {len(new)} in new, {len(differing)} differ")
        for key in differing:
            print(f"  {key}: {base.get(key)} -> {new.get(key)}")
        sys.exit(1 if differing else 0)
    result = fingerprints()
    text = json.dumps(result, indent=1, sort_keys=True)
    if args.out:
        with open(args.out, "w") as handle:
            handle.write(text)
    print(f"{len(result)} fingerprints", file=sys.stderr)


if __name__ == "__main__":
    main()
