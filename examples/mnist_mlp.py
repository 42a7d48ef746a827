"""A multilayer perceptron on MNIST or Fashion-MNIST.

    python examples/mnist_mlp.py --epochs 20
    python examples/mnist_mlp.py --dataset mnist

Fashion-MNIST is the default (as in the README's measurements); MNIST is a
flag away, for machines that can download it.

Prints the test accuracy and the time it took.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import minikeras as mk  # noqa: E402
from minikeras import layers  # noqa: E402
from _common import load_digits_like, parser, run, summary, train_and_report  # noqa: E402


def build_model():
    return mk.Sequential([
        layers.Input(shape=(784,)),
        layers.Dense(512, activation="relu"),
        layers.Dropout(0.2),
        layers.Dense(256, activation="relu"),
        layers.Dropout(0.2),
        layers.Dense(10, activation="softmax"),
    ])


def main(argv=None):
    args = parser(summary(__doc__), epochs=20, batch_size=128,
                  datasets=["fashion_mnist", "mnist"]).parse_args(argv)
    mk.random.seed(args.seed)
    train, test = load_digits_like(args, (784,))
    return train_and_report(args, build_model, "MLP", train, test)


if __name__ == "__main__":
    run(main)
