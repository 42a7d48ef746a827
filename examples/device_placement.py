"""TensorFlow's "Use a GPU" guide, in minikeras.

Lists devices, logs where ops run, places tensors and ops by hand, uses
soft placement, limits memory and splits a device into logical devices.
It runs on GPUs when CuPy sees any, and on logical CPU devices otherwise.

    python examples/device_placement.py
"""
import argparse
import os
import sys
import time

import numpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import minikeras as mk  # noqa: E402
from minikeras import config  # noqa: E402
from _common import positive_int, run, summary  # noqa: E402


def main(argv=None):
    # No --device: choosing the devices is what this example demonstrates.
    options = argparse.ArgumentParser(description=summary(__doc__))
    options.add_argument("--epochs", type=positive_int, default=20, help="epochs of the closing model (default 20)")
    options.add_argument("--batch-size", type=positive_int, default=32, help="batch size (default 32)")
    options.add_argument("--seed", type=int, default=0, help="random seed")
    options.add_argument("--verbose", type=int, default=0, choices=[0, 1, 2], help="fit verbosity")
    args = options.parse_args(argv)
    mk.random.seed(args.seed)
    start = time.perf_counter()
    gpus = config.list_physical_devices("GPU")
    cpus = config.list_physical_devices("CPU")
    print("Physical devices:", [d.name for d in cpus + gpus])
    print("Num GPUs available:", len(gpus))

    # Memory settings and logical devices must be chosen before first use.
    if gpus:
        config.set_memory_growth(gpus[0], True)  # allocate on demand
        config.set_logical_device_configuration(
            gpus[0], [config.LogicalDeviceConfiguration(memory_limit=1024),
                      config.LogicalDeviceConfiguration(memory_limit=1024)])
        kind, limit_mb = "gpu", 1024
    else:
        config.set_logical_device_configuration(
            cpus[0], [config.LogicalDeviceConfiguration(memory_limit=64),
                      config.LogicalDeviceConfiguration(memory_limit=64)])
        kind, limit_mb = "cpu", 64
    logical = config.list_logical_devices()
    print("Logical devices:", [d.name for d in logical])

    # 1. Logging device placement.
    config.set_log_device_placement(True)
    a = mk.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    b = mk.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    c = mk.ops.matmul(a, b)
    print("a @ b =", c.numpy().tolist(), "on", c.device)

    # 2. Manual placement: tensors on one device, the op on another.
    with mk.device(f"{kind}:0"):
        a = mk.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        b = mk.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    with mk.device(f"{kind}:1"):
        c = mk.ops.matmul(a, b)  # a and b are copied to the second device
    print("placed by hand:", c.device)
    config.set_log_device_placement(False)

    # 3. A device that does not exist: an error, or soft placement.
    try:
        with mk.device("gpu:9"):
            pass
    except RuntimeError as error:
        print("Without soft placement:", str(error).split(".")[0])
    config.set_soft_device_placement(True)
    with mk.device("gpu:9"):
        d = mk.tensor([1.0]) * 2.0
    print("With soft placement the op ran on", d.device)
    config.set_soft_device_placement(False)

    # 4. Memory: accounting, peaks, and what happens past a limit.
    with mk.device(f"{kind}:1"):
        config.reset_memory_stats(f"{kind}:1")
        big = mk.ops.zeros((1024, 1024))  # 4 MiB
        print(f"memory on {kind}:1:", config.get_memory_info(f"{kind}:1"))
        try:
            mk.ops.zeros((2 * limit_mb, 1024, 256))  # twice the device's limit
        except mk.errors.ResourceExhaustedError as error:
            print("Past the limit:", error)
        del big

    # 5. One model, trained on the second logical device.
    with mk.device(f"{kind}:1"):
        rng = numpy.random.default_rng(args.seed)
        x = rng.normal(size=(768, 8)).astype("float32")
        y = (x.sum(axis=1) > 0).astype("float32")
        model = mk.Sequential([mk.layers.Input(shape=(8,)), mk.layers.Dense(16, activation="relu"),
                               mk.layers.Dense(1, activation="sigmoid")])
        model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
        model.fit(x[:512], y[:512], epochs=args.epochs, batch_size=args.batch_size, verbose=args.verbose)
        loss, accuracy = model.evaluate(x[512:], y[512:], verbose=0)
        print(f"model weights live on {model.weights[0].device}")
    print(f"device placement: test loss {loss:.4f}, test accuracy {accuracy:.4f}, "
          f"done in {time.perf_counter() - start:.1f}s")
    return accuracy


if __name__ == "__main__":
    run(main)
