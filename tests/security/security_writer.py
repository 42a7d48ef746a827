"""The writer process of the kill -9 trials (benchmarks/security_issue12.py):
saves the benchmark's model to a target in a loop until killed."""
import sys

import minikeras as mk


def main(target):
    mk.random.seed(0)
    model = mk.Sequential([mk.layers.Dense(2048, input_shape=(1024,), name="big"), mk.layers.Dense(4, name="out")])
    print("saving", flush=True)
    while True:
        model.save(target)


if __name__ == "__main__":
    main(sys.argv[1])
