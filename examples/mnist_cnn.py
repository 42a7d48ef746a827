"""A small convolutional network on MNIST or Fashion-MNIST: two conv +
pooling blocks.

    python examples/mnist_cnn.py --dataset fashion_mnist --epochs 15

Prints the test accuracy and the time it took.
"""
import contextlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import minikeras as mk  # noqa: E402
from minikeras import layers  # noqa: E402
from _common import Timer, limit, parser, run  # noqa: E402


def build_model():
    return mk.Sequential([
        layers.Input(shape=(28, 28, 1)),
        layers.Conv2D(32, 3, activation="relu"),
        layers.MaxPooling2D(2),
        layers.Conv2D(64, 3, activation="relu"),
        layers.MaxPooling2D(2),
        layers.Flatten(),
        layers.Dropout(0.3),
        layers.Dense(128, activation="relu"),
        layers.Dense(10, activation="softmax"),
    ])


def main(argv=None):
    args = parser(__doc__.splitlines()[0], epochs=15, batch_size=128,
                  datasets=["mnist", "fashion_mnist"]).parse_args(argv)
    mk.random.seed(args.seed)
    dataset = getattr(mk.datasets, args.dataset)
    (x_train, y_train), (x_test, y_test) = dataset.load_data()
    x_train, y_train = limit((x_train, y_train), args.limit)
    x_test, y_test = limit((x_test, y_test), args.limit)
    x_train = x_train[..., None].astype("float32") / 255.0
    x_test = x_test[..., None].astype("float32") / 255.0

    scope = mk.device(args.device) if args.device else contextlib.nullcontext()
    with scope, Timer() as timer:
        model = build_model()
        model.compile(optimizer=mk.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy",
                      metrics=["accuracy"])
        if args.verbose:
            model.summary()
        model.fit(x_train, y_train, batch_size=args.batch_size, epochs=args.epochs, verbose=args.verbose,
                  validation_data=(x_test, y_test))
        loss, accuracy = model.evaluate(x_test, y_test, batch_size=512, verbose=0)
    print(f"{args.dataset} CNN: test loss {loss:.4f}, test accuracy {accuracy:.4f}, "
          f"{args.epochs} epochs in {timer.seconds:.1f}s")
    return accuracy


if __name__ == "__main__":
    run(main)
