"""A convolutional network with batch normalization on CIFAR-10, trained
with random flips and shifts.

    python examples/cifar10_cnn.py --epochs 16

Prints the test accuracy and the time it took.
"""
import contextlib
import os
import sys

import numpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import minikeras as mk  # noqa: E402
from minikeras import layers  # noqa: E402
from _common import Timer, limit, parser, run, summary  # noqa: E402


def conv_block(filters, dropout):
    return [
        layers.Conv2D(filters, 3, padding="same", use_bias=False),
        layers.BatchNormalization(),
        layers.Activation("relu"),
        layers.Conv2D(filters, 3, use_bias=False),
        layers.BatchNormalization(),
        layers.Activation("relu"),
        layers.MaxPooling2D(2),
        layers.Dropout(dropout),
    ]


def build_model():
    return mk.Sequential(
        [layers.Input(shape=(32, 32, 3))]
        + conv_block(32, 0.2)
        + conv_block(64, 0.3)
        + [
            layers.Flatten(),
            layers.Dense(256, use_bias=False),
            layers.BatchNormalization(),
            layers.Activation("relu"),
            layers.Dropout(0.4),
            layers.Dense(10, activation="softmax"),
        ]
    )


class AugmentedBatches(mk.utils.Sequence):
    """Shuffled batches with random horizontal flips and shifts of up to
    ``shift`` pixels (zero padded), redrawn every epoch."""

    def __init__(self, x, y, batch_size, shift=4, seed=0):
        self.x, self.y, self.batch_size, self.shift = x, y, batch_size, shift
        self.rng = numpy.random.default_rng(seed)
        self.order = self.rng.permutation(len(x))

    def __len__(self):
        return -(-len(self.x) // self.batch_size)

    def __getitem__(self, index):
        rows = self.order[index * self.batch_size:(index + 1) * self.batch_size]
        images = self.x[rows]
        flip = self.rng.random(len(rows)) < 0.5
        images[flip] = images[flip, :, ::-1]
        s = self.shift
        padded = numpy.pad(images, ((0, 0), (s, s), (s, s), (0, 0)))
        offsets = self.rng.integers(0, 2 * s + 1, size=(len(rows), 2))
        out = numpy.empty_like(images)
        for i, (dy, dx) in enumerate(offsets):
            out[i] = padded[i, dy:dy + 32, dx:dx + 32]
        return out, self.y[rows]

    def on_epoch_end(self):
        self.order = self.rng.permutation(len(self.x))


def main(argv=None):
    p = parser(summary(__doc__), epochs=16, batch_size=128)
    p.add_argument("--validate", action="store_true", help="report test accuracy after every epoch (slower)")
    args = p.parse_args(argv)
    mk.random.seed(args.seed)
    (x_train, y_train), (x_test, y_test) = mk.datasets.cifar10.load_data()
    x_train, y_train = limit((x_train, y_train), args.limit)
    x_test, y_test = limit((x_test, y_test), args.limit)
    x_train = x_train.astype("float32") / 255.0
    x_test = x_test.astype("float32") / 255.0

    batches = AugmentedBatches(x_train, y_train, args.batch_size, seed=args.seed)
    schedule = mk.optimizers.schedules.CosineDecay(2e-3, decay_steps=max(1, args.epochs * len(batches)), alpha=0.02)
    scope = mk.device(args.device) if args.device else contextlib.nullcontext()
    with scope, Timer() as timer:
        model = build_model()
        model.compile(optimizer=mk.optimizers.Adam(schedule), loss="sparse_categorical_crossentropy",
                      metrics=["accuracy"])
        if args.verbose:
            model.summary()
        model.fit(batches, epochs=args.epochs, verbose=args.verbose,
                  validation_data=(x_test, y_test) if args.validate else None)
        loss, accuracy = model.evaluate(x_test, y_test, batch_size=500, verbose=0)
    print(f"cifar10 CNN: test loss {loss:.4f}, test accuracy {accuracy:.4f}, "
          f"{args.epochs} epochs in {timer.seconds:.1f}s")
    return accuracy


if __name__ == "__main__":
    run(main)
