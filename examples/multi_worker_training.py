"""Multi-worker training over MPI: a Fashion-MNIST CNN on N processes.

Every process runs this same script; each loads the data set and keeps only
its shard (every N-th sample), trains on it with MultiWorkerMirroredModel
(one global batch of ``--batch-size`` x N samples per step, gradients
summed over the workers), and evaluates its shard of the test set. The
loss and accuracy are global (all workers print the same numbers; worker 0
alone prints, and shows the progress bar).

    pip install -e '.[mpi]'                      # mpi4py + the mpich wheel
    mpiexec -n 2 python examples/multi_worker_training.py --limit 2048 --epochs 1

Each worker uses its GPU when it has one (by local rank), else ``cpu:0``.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import minikeras as mk  # noqa: E402
from minikeras.distribute import MultiWorkerMirroredModel, shard  # noqa: E402
from _common import Timer, limit, parser, positive_int, run, summary  # noqa: E402
from mirrored_training import build_model  # noqa: E402  (the same CNN as the one-process example)


def main(argv=None):
    p = parser(summary(__doc__), epochs=3, batch_size=128, device=False)
    p.add_argument("--timeout", type=positive_int, default=300,
                   help="seconds a worker waits for the others before giving up (default 300)")
    args = p.parse_args(argv)
    # The model may start from any seed: worker 0's weights are broadcast.
    mk.random.seed(args.seed)
    model = build_model()
    trainer = MultiWorkerMirroredModel(model, data="sharded", timeout=args.timeout)
    workers, me = trainer.num_workers, trainer.worker_index

    (x_train, y_train), (x_test, y_test) = mk.datasets.fashion_mnist.load_data()
    x_train, y_train = shard(limit((x_train, y_train), args.limit), workers, me)
    x_test, y_test = shard(limit((x_test, y_test), args.limit), workers, me)
    x_train = x_train[..., None].astype("float32") / 255.0
    x_test = x_test[..., None].astype("float32") / 255.0

    with Timer() as timer:
        trainer.compile(optimizer=mk.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy",
                        metrics=["accuracy"])
        trainer.fit(x_train, y_train, batch_size=args.batch_size, epochs=args.epochs, verbose=args.verbose)
        loss, accuracy = trainer.evaluate(x_test, y_test, batch_size=args.batch_size, verbose=0)
    if trainer.is_chief:
        print(f"worker devices: {[d.name for d in trainer.devices]} x {workers} workers")
        print(f"fashion_mnist CNN on {workers} workers (global batch {args.batch_size * workers}): "
              f"test loss {loss:.4f}, test accuracy {accuracy:.4f}, {args.epochs} epochs in {timer.seconds:.1f}s")
    return accuracy


if __name__ == "__main__":
    run(main)
