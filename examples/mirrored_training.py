"""Data-parallel training with MirroredModel, TensorFlow's MirroredStrategy
in minikeras.

Uses every GPU when there are at least two; splits a single GPU into
``--replicas`` logical GPUs (each with its share of the GPU's memory, as
TensorFlow's distributed-training guide does on one GPU); with no GPU,
splits the CPU into ``--replicas`` logical devices. Each batch is split across the
replicas, gradients are averaged (weighted by each replica's share of the
batch) and the same update is applied everywhere.

    python examples/mirrored_training.py --dataset fashion_mnist --epochs 3

Prints the test accuracy and the time it took.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import minikeras as mk  # noqa: E402
from minikeras import config, layers  # noqa: E402
from _common import Timer, limit, parser, positive_int, run, summary  # noqa: E402


def build_model():
    return mk.Sequential([
        layers.Input(shape=(28, 28, 1)),
        layers.Conv2D(32, 3, activation="relu"),
        layers.MaxPooling2D(2),
        layers.Conv2D(64, 3, activation="relu"),
        layers.MaxPooling2D(2),
        layers.Flatten(),
        layers.Dense(128, activation="relu"),
        layers.Dense(10, activation="softmax"),
    ])


def split_devices(replicas):
    """One GPU: ``replicas`` logical GPUs sharing 90% of its memory; no GPU:
    ``replicas`` logical CPUs; two or more GPUs: left as they are."""
    if config.is_initialized():
        return
    gpus = config.list_physical_devices("GPU")
    if len(gpus) == 1 and replicas > 1:
        share_mb = int(gpus[0].total_memory * 0.9 / replicas / 2**20)
        config.set_logical_device_configuration(gpus[0], [config.LogicalDeviceConfiguration(share_mb)] * replicas)
        print(f"one GPU: split into {replicas} logical GPUs of {share_mb} MB each")
    elif not gpus:
        cpu = config.list_physical_devices("CPU")[0]
        config.set_logical_device_configuration(cpu, [config.LogicalDeviceConfiguration()] * replicas)


def main(argv=None):
    # No --device: MirroredModel places one replica on each device it uses.
    p = parser(summary(__doc__), epochs=3, batch_size=256, datasets=["fashion_mnist", "mnist"],
               device=False)
    p.add_argument("--replicas", type=positive_int, default=2,
                   help="logical devices to split one GPU (or, with no GPU, the CPU) into (default 2)")
    args = p.parse_args(argv)
    split_devices(args.replicas)
    mk.random.seed(args.seed)
    dataset = getattr(mk.datasets, args.dataset)
    (x_train, y_train), (x_test, y_test) = dataset.load_data()
    x_train, y_train = limit((x_train, y_train), args.limit)
    x_test, y_test = limit((x_test, y_test), args.limit)
    x_train = x_train[..., None].astype("float32") / 255.0
    x_test = x_test[..., None].astype("float32") / 255.0

    with Timer() as timer:
        model = build_model()
        mirrored = mk.MirroredModel(model)
        print("replicas on:", [d.name for d in mirrored.devices])
        mirrored.compile(optimizer=mk.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy",
                         metrics=["accuracy"])
        mirrored.fit(x_train, y_train, batch_size=args.batch_size, epochs=args.epochs, verbose=args.verbose)
        loss, accuracy = mirrored.evaluate(x_test, y_test, batch_size=512, verbose=0)
    print(f"{args.dataset} mirrored CNN on {len(mirrored.devices)} devices: test loss {loss:.4f}, "
          f"test accuracy {accuracy:.4f}, {args.epochs} epochs in {timer.seconds:.1f}s")
    return accuracy


if __name__ == "__main__":
    run(main)
