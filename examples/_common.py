"""Shared command-line handling and data preparation for the examples."""
import argparse
import sys
import time


def positive_int(text):
    """An argparse type: a whole number of at least 1.

    A negative ``--limit`` would otherwise slice samples off the end, and a
    zero batch size would fail deep inside ``fit``.
    """
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, received {text!r}")
    return value


def summary(doc):
    """The first paragraph of a module docstring, on one line: ``--help``'s
    description (its first line alone can stop mid-sentence)."""
    return " ".join(doc.strip().split("\n\n")[0].split())


def parser(description, epochs, batch_size, datasets=None, device=True):
    """An argument parser with the options every example takes.

    ``device=False`` leaves out ``--device``, for examples that choose their
    devices themselves.
    """
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--epochs", type=positive_int, default=epochs, help=f"training epochs (default {epochs})")
    p.add_argument("--batch-size", type=positive_int, default=batch_size,
                   help=f"batch size (default {batch_size})")
    if device:
        p.add_argument("--device", default=None,
                       help="device to train on, e.g. cpu:0 or gpu:0 (default: the default device)")
    p.add_argument("--limit", type=positive_int, default=None,
                   help="use only the first N training and test samples (smoke runs)")
    p.add_argument("--seed", type=int, default=0, help="random seed")
    p.add_argument("--verbose", type=int, default=1, choices=[0, 1, 2], help="fit verbosity")
    if datasets:
        p.add_argument("--dataset", default=datasets[0], choices=datasets, help=f"dataset (default {datasets[0]})")
    return p


def limit(arrays, count):
    """The first ``count`` samples of each array (all when count is None)."""
    return tuple(a if count is None else a[:count] for a in arrays)


class Timer:
    """``with Timer() as t: ...; t.seconds``."""

    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.start


def run(main, argv=None):
    """Calls ``main(argv)`` and returns what it returns.

    A dataset that cannot be found or read ends the program with its message
    alone and exit status 1: the message already says which file to put
    where, and a traceback through the download code would bury it.
    """
    from minikeras.datasets import DatasetError

    try:
        return main(argv)
    except DatasetError as error:
        sys.exit(f"{type(error).__name__}: {error}")


def load_digits_like(args, sample_shape):
    """MNIST or Fashion-MNIST (``args.dataset``), limited, scaled to [0, 1]
    float32 and reshaped to ``(N,) + sample_shape``."""
    import minikeras as mk

    dataset = getattr(mk.datasets, args.dataset)
    (x_train, y_train), (x_test, y_test) = dataset.load_data()
    x_train, y_train = limit((x_train, y_train), args.limit)
    x_test, y_test = limit((x_test, y_test), args.limit)
    x_train = x_train.reshape((len(x_train),) + sample_shape).astype("float32") / 255.0
    x_test = x_test.reshape((len(x_test),) + sample_shape).astype("float32") / 255.0
    return (x_train, y_train), (x_test, y_test)


def train_and_report(args, build_model, title, train, test):
    """Compile with Adam(1e-3), fit with the test set as validation data,
    evaluate, print the test accuracy and time; returns the accuracy."""
    import contextlib

    import minikeras as mk

    (x_train, y_train), (x_test, y_test) = train, test
    scope = mk.device(args.device) if getattr(args, "device", None) else contextlib.nullcontext()
    with scope, Timer() as timer:
        model = build_model()
        model.compile(optimizer=mk.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy",
                      metrics=["accuracy"])
        if args.verbose:
            model.summary()
        model.fit(x_train, y_train, batch_size=args.batch_size, epochs=args.epochs, verbose=args.verbose,
                  validation_data=(x_test, y_test))
        loss, accuracy = model.evaluate(x_test, y_test, batch_size=512, verbose=0)
    print(f"{args.dataset} {title}: test loss {loss:.4f}, test accuracy {accuracy:.4f}, "
          f"{args.epochs} epochs in {timer.seconds:.1f}s")
    return accuracy
