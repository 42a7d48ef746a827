"""Weights after N training steps of the benchmark models, to compare two checkouts bit for bit.

Issue 35's rule for host-cost work: nothing else changes. This trains the
MLP, Fashion CNN and CIFAR CNN of compare.py (Adam, batch 16, seeded, the
same few batches in turn) for ``--steps`` train_on_batch calls on the
default device (``MINIKERAS_SIMULATED_GPU=1`` for the simulated GPU) with
the minikeras of ``--minikeras``, and writes every weight to an .npz;
``--compare`` reports whether two such files are bit-identical.

    git worktree add /tmp/base dc1bcbb
    python benchmarks/bit_identity.py --minikeras /tmp/base --out /tmp/before.npz
    python benchmarks/bit_identity.py --out /tmp/after.npz
    python benchmarks/bit_identity.py --compare /tmp/before.npz /tmp/after.npz
"""
import argparse
import os
import sys

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPES = {"mlp": (784,), "cnn": (28, 28, 1), "cifar_cnn": (32, 32, 3)}


def train(models, steps, batch):
    """``{"<model>/<index>": weight array}`` after ``steps`` steps of each model."""
    import minikeras as mk
    from compare import _minikeras_model

    weights = {}
    for name in models:
        mk.random.seed(0)
        rng = numpy.random.default_rng(0)
        model = _minikeras_model(name)
        model.compile(optimizer=mk.optimizers.Adam(1e-3),
                      loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True))
        batches = [(rng.random((batch,) + SHAPES[name], dtype=numpy.float32), rng.integers(0, 10, size=batch))
                   for _ in range(4)]
        for step in range(steps):
            x, y = batches[step % len(batches)]
            model.train_on_batch(x, y)
        for index, weight in enumerate(model.get_weights()):
            weights[f"{name}/{index}"] = numpy.asarray(weight)
    return weights


def compare(before_path, after_path):
    """Print per model whether every weight is bit-identical; return True when all are."""
    before, after = numpy.load(before_path), numpy.load(after_path)
    same = sorted(before.files) == sorted(after.files)
    for key in sorted(before.files):
        if key in after.files:
            equal = before[key].dtype == after[key].dtype and before[key].tobytes() == after[key].tobytes()
            same &= equal
            if not equal:
                print(f"{key}: differs (max |diff| {numpy.max(numpy.abs(before[key] - after[key]))})")
    print(f"{len(before.files)} weights: {'bit-identical' if same else 'DIFFERENT'}")
    return same


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(SHAPES))
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--minikeras", default=os.path.dirname(HERE), help="the folder that holds minikeras/")
    parser.add_argument("--out", default=None, help="where to write the weights (.npz)")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args(argv)
    if args.compare:
        return 0 if compare(*args.compare) else 1
    sys.path.insert(0, HERE)
    sys.path.insert(0, args.minikeras)
    weights = train(args.models, args.steps, args.batch)
    numpy.savez(args.out, **weights)
    import minikeras

    print(f"wrote {len(weights)} weights after {args.steps} steps to {args.out} "
          f"(minikeras of {os.path.dirname(os.path.dirname(minikeras.__file__))})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
