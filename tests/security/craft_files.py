"""Crafted model files for the security tests, generated here (no binary
blobs): each starts from a legitimate file written by minikeras and has its
JSON config rewritten the way an attacker would.

Also a script: ``python tests/security/craft_files.py OUT_DIR`` writes every
crafted file into OUT_DIR (to inspect them, or to try them on other tools).
"""
import gzip
import json
import os
import sys
import tarfile

import h5py
import numpy

import minikeras as mk
from minikeras import layers
from minikeras.layers.base import Layer


def scale_by_two(x):
    """The legitimate Lambda function of the base file."""
    return x * 2.0


class Payload(Layer):
    """A Layer subclass outside minikeras whose constructor has a side
    effect: a file naming it must not be able to instantiate it."""

    def __init__(self, path=None, **kwargs):
        super().__init__(**kwargs)
        if path:
            with open(path, "w") as handle:
                handle.write("constructed from a file")


def save_lambda_model(path, compile_model=True):
    """Input(4) -> Dense(3) -> Lambda(scale_by_two) -> Dense(2), saved to ``path``."""
    inputs = mk.Input((4,), name="x")
    hidden = layers.Dense(3, name="hidden")(inputs)
    scaled = layers.Lambda(scale_by_two, name="scale")(hidden)
    outputs = layers.Dense(2, name="head")(scaled)
    model = mk.Model(inputs, outputs, name="victim")
    if compile_model:
        model.compile(optimizer="adam", loss="mse")
    model.save(path)
    return model


def save_plain_model(path):
    """A small compiled Sequential model without a Lambda."""
    model = mk.Sequential([layers.Dense(3, input_shape=(4,), name="hidden"), layers.Dense(2, name="head")])
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    model.save(path)
    return model


def rewrite_attribute(path, key, edit, keep_checksum=False):
    """``attrs[key] = json(edit(json(attrs[key])))`` in place. An attacker
    drops the config checksum (a file without one still loads), unless
    ``keep_checksum`` (to test that an edit under it is caught)."""
    with h5py.File(path, "r+") as handle:
        value = handle.attrs[key]
        config = json.loads(value.decode() if isinstance(value, bytes) else value)
        handle.attrs[key] = json.dumps(edit(config))
        if not keep_checksum and "minikeras_config_crc32" in handle.attrs:
            del handle.attrs["minikeras_config_crc32"]


def _layer_specs(config):
    return config["config"]["layers"]


def lambda_gadget(path, module, function, arguments=None):
    """A file whose Lambda layer names ``module.function``."""
    save_lambda_model(path)

    def edit(config):
        for spec in _layer_specs(config):
            if spec["class_name"] == "Lambda":
                spec["config"].update(function=function, module=module, function_type="function",
                                      arguments=arguments or {})
        return config

    rewrite_attribute(path, "model_config", edit)


def layer_class_gadget(path, class_name, extra_config=None, module=None):
    """A file whose Dense layer is replaced by ``class_name`` (with a
    ``module`` key as Keras 3 writes one, for a class path)."""
    save_lambda_model(path)

    def edit(config):
        spec = _layer_specs(config)[1]
        spec["class_name"] = class_name
        if module is not None:
            spec["module"] = module
        spec["config"] = {"name": spec["config"]["name"], **(extra_config or {})}
        return config

    rewrite_attribute(path, "model_config", edit)


def loss_gadget(path, loss):
    """A compiled file whose training config's loss is ``loss``."""
    save_plain_model(path)

    def edit(config):
        config["loss"] = loss
        return config

    rewrite_attribute(path, "training_config", edit)


def optimizer_gadget(path, class_name):
    """A compiled file whose optimizer names ``class_name``."""
    save_plain_model(path)

    def edit(config):
        config["optimizer_config"]["class_name"] = class_name
        return config

    rewrite_attribute(path, "training_config", edit)


# ------------------------------------------------------------ memory attacks
def huge_dataset_file(path, shape=(2**17, 2**17), fill=False):
    """A model file whose kernel dataset declares ``shape`` float32 (64 GiB
    by default) in a few KB: chunked, no chunk written (``fill``: written
    with zeros, for small shapes)."""
    model = mk.Sequential([layers.Dense(3, input_shape=(4,), name="hidden")])
    model.save(path)
    with h5py.File(path, "r+") as handle:
        group = handle["model_weights"]["hidden"]
        names = [name.decode() for name in group.attrs["weight_names"]]
        del group[names[0]]
        if fill:
            group.create_dataset(names[0], data=numpy.zeros(shape, "float32"))
        else:
            group.create_dataset(names[0], shape=shape, dtype="float32",
                                 chunks=tuple(min(64, size) for size in shape))


def huge_layer_config_file(path, units=2**28):
    """A model file whose config declares Dense(units) while its datasets
    stay small (the config alone would allocate ``4 * 4 * units`` bytes for
    the kernel, and the initializer three times that)."""
    model = mk.Sequential([layers.Dense(3, input_shape=(4,), name="hidden")])
    model.save(path)

    def edit(config):
        config["config"]["layers"][-1]["config"]["units"] = units
        return config

    rewrite_attribute(path, "model_config", edit)


def huge_input_config_file(path, size=2**26):
    """A model file whose Input declares ``(size, 4)`` samples: the probe
    batch alone would be ``2 * size * 4 * 4`` bytes."""
    model = mk.Sequential([layers.Dense(3, input_shape=(4,), name="hidden")])
    model.save(path)

    def edit(config):
        # minikeras's first schema (batch_input_shape) and Keras's (an
        # InputLayer's batch_shape, the build_config), whichever is written.
        if config["config"].get("batch_input_shape") is not None:
            config["config"]["batch_input_shape"] = [None, size, 4]
        for spec in config["config"]["layers"]:
            for key in ("batch_input_shape", "batch_shape"):
                if key in spec["config"]:
                    spec["config"][key] = [None, size, 4]
        if config.get("build_config"):
            config["build_config"]["input_shape"] = [None, size, 4]
        return config

    rewrite_attribute(path, "model_config", edit)


# ----------------------------------------------------------- dataset attacks
def idx_bomb(path, shape=(2**20, 2**12, 2**10), data_bytes=3 * 2**20, gzipped=False):
    """An IDX image file whose header declares ``shape`` uint8 values (4 TiB
    by default) but which holds only ``data_bytes`` of data."""
    header = bytes([0, 0, 0x08, len(shape)]) + b"".join(int(size).to_bytes(4, "big") for size in shape)
    raw = header + bytes(data_bytes)
    with open(path, "wb") as handle:
        handle.write(gzip.compress(raw, mtime=0) if gzipped else raw)


def cifar_huge_member(path, declared=2**33):
    """A CIFAR tar archive whose ``data_batch_1`` declares ``declared`` bytes
    (8 GiB by default) and holds a few KB."""
    info = tarfile.TarInfo("cifar-10-batches-py/data_batch_1")
    info.size = declared
    with gzip.open(path, "wb") as handle:
        handle.write(info.tobuf(format=tarfile.GNU_FORMAT) + bytes(4096))


def all_crafted(folder):
    """Write every crafted file into ``folder``; returns ``{name: path}``."""
    files = {}

    def target(name):
        files[name] = os.path.join(folder, name + ".h5")
        return files[name]

    lambda_gadget(target("lambda_os_system"), "os", "system")
    lambda_gadget(target("lambda_subprocess_popen"), "subprocess", "Popen")
    lambda_gadget(target("lambda_builtins_eval"), "builtins", "eval")
    lambda_gadget(target("lambda_posix_spawnve"), "posix", "spawnve")
    layer_class_gadget(target("class_path_popen"), "Popen", module="subprocess")
    layer_class_gadget(target("class_path_dotted"), "subprocess.Popen")
    layer_class_gadget(target("class_outside_minikeras"), "Payload", {"path": os.path.join(folder, "SENTINEL")})
    loss_gadget(target("loss_non_loss_callable"), {"__function__": "resolve"})
    loss_gadget(target("loss_os_system"), {"__function__": "system"})
    optimizer_gadget(target("optimizer_popen"), "Popen")
    huge_dataset_file(target("huge_dataset"))
    huge_layer_config_file(target("huge_layer_config"))
    huge_input_config_file(target("huge_input_config"))
    return files


def all_crafted_datasets(folder):
    """Write the crafted dataset files into ``folder``; returns ``{name: path}``."""
    files = {"idx_raw_bomb": os.path.join(folder, "idx_raw_bomb"),
             "idx_gzip_bomb": os.path.join(folder, "idx_gzip_bomb.gz"),
             "idx_under_cap_truncated": os.path.join(folder, "idx_under_cap_truncated"),
             "cifar_huge_member": os.path.join(folder, "cifar_huge_member.tar.gz")}
    idx_bomb(files["idx_raw_bomb"])
    idx_bomb(files["idx_gzip_bomb"], gzipped=True)
    idx_bomb(files["idx_under_cap_truncated"], shape=(2**19, 2**5, 2**5))  # 512 MiB declared
    cifar_huge_member(files["cifar_huge_member"])
    return files


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "crafted"
    os.makedirs(out, exist_ok=True)
    numpy.random.seed(0)
    for name, path in {**all_crafted(out), **all_crafted_datasets(out)}.items():
        print(f"{name}: {path} ({os.path.getsize(path)} bytes)")
