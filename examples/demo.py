"""A tiny end-to-end demo: fit a small MLP on a synthetic task.

    python examples/demo.py

Needs no dataset. Prints the test accuracy and the time it took.
"""
import contextlib
import os
import sys

import numpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import minikeras as mk  # noqa: E402
from minikeras import layers  # noqa: E402
from _common import Timer, limit, parser, run, summary  # noqa: E402


def main(argv=None):
    args = parser(summary(__doc__), epochs=5, batch_size=64).parse_args(argv)
    mk.random.seed(args.seed)
    # The label says which half of the features has the larger sum: learnable
    # by a small MLP, so the test accuracy shows that training works.
    rng = numpy.random.default_rng(args.seed)
    x = rng.normal(size=(2000, 20)).astype("float32")
    y = (x[:, :10].sum(axis=1) > x[:, 10:].sum(axis=1)).astype("int64")
    x_train, y_train = limit((x[:1500], y[:1500]), args.limit)
    x_test, y_test = limit((x[1500:], y[1500:]), args.limit)

    scope = mk.device(args.device) if args.device else contextlib.nullcontext()
    with scope, Timer() as timer:
        model = mk.Sequential([
            layers.Input(shape=(20,)),
            layers.Dense(64, activation="relu"),
            layers.Dense(2, activation="softmax"),
        ])
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
        if args.verbose:
            model.summary()
        model.fit(x_train, y_train, batch_size=args.batch_size, epochs=args.epochs, verbose=args.verbose)
        loss, accuracy = model.evaluate(x_test, y_test, verbose=0)
    print(f"demo MLP: test loss {loss:.4f}, test accuracy {accuracy:.4f}, "
          f"{args.epochs} epochs in {timer.seconds:.1f}s")
    return accuracy


if __name__ == "__main__":
    run(main)
