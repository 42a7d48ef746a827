"""Forward-pass speed of ResNet50 and MobileNetV2 (inference, float32, CPU):
minikeras.applications against Keras 3 (TensorFlow backend) and PyTorch.

Each framework builds the model with random weights and times
``predict``/``forward`` on a batch of 224x224 images (best of ``--rounds``
after one warm-up). Keras and PyTorch run in a worker subprocess of the side
Python (``--other-python``, default /work/side/bin/python); the PyTorch
models are written here with torch.nn (torchvision is not needed), same
layers as Keras's.

    python benchmarks/bench_applications.py                   # table + benchmarks/results/bench_applications.json
    python benchmarks/bench_applications.py --batch 4 --rounds 3 --no-others
"""
import argparse
import json
import os
import subprocess
import sys
import time

MODELS = ("ResNet50", "MobileNetV2")
DEFAULT_OTHER_PYTHON = "/work/side/bin/python"


def _best(call, rounds):
    call()  # warm-up: builds caches and lazily created buffers
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return min(times)


def time_minikeras(name, batch, rounds):
    import numpy

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import minikeras as mk

    model = getattr(mk.applications, name)(weights=None)
    images = numpy.random.default_rng(0).uniform(0, 255, (batch, 224, 224, 3)).astype("float32")
    return _best(lambda: model.predict(images, batch_size=batch, verbose=0), rounds)


def time_keras(name, batch, rounds):
    import numpy

    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    import keras

    model = getattr(keras.applications, name)(weights=None)
    images = numpy.random.default_rng(0).uniform(0, 255, (batch, 224, 224, 3)).astype("float32")
    return _best(lambda: model.predict(images, batch_size=batch, verbose=0), rounds)


def _torch_models():
    import torch
    from torch import nn

    def conv_bn(cin, cout, kernel, stride=1, groups=1, act=nn.ReLU):
        layers = [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
        return nn.Sequential(*layers, act()) if act else nn.Sequential(*layers)

    class Bottleneck(nn.Module):
        def __init__(self, cin, width, stride):
            super().__init__()
            self.body = nn.Sequential(conv_bn(cin, width, 1, stride), conv_bn(width, width, 3),
                                      conv_bn(width, 4 * width, 1, act=None))
            self.shortcut = conv_bn(cin, 4 * width, 1, stride, act=None) if stride != 1 or cin != 4 * width \
                else nn.Identity()

        def forward(self, x):
            return torch.relu(self.body(x) + self.shortcut(x))

    def resnet50():
        stages, cin = [], 64
        for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
            for index in range(blocks):
                stages.append(Bottleneck(cin, width, stride if index == 0 else 1))
                cin = 4 * width
        return nn.Sequential(conv_bn(3, 64, 7, 2), nn.MaxPool2d(3, 2, 1), *stages, nn.AdaptiveAvgPool2d(1),
                             nn.Flatten(), nn.Linear(2048, 1000), nn.Softmax(-1))

    class Inverted(nn.Module):
        def __init__(self, cin, cout, stride, expansion):
            super().__init__()
            hidden = cin * expansion
            layers = [conv_bn(cin, hidden, 1, act=nn.ReLU6)] if expansion != 1 else []
            layers += [conv_bn(hidden, hidden, 3, stride, groups=hidden, act=nn.ReLU6),
                       conv_bn(hidden, cout, 1, act=None)]
            self.body, self.residual = nn.Sequential(*layers), stride == 1 and cin == cout

        def forward(self, x):
            return x + self.body(x) if self.residual else self.body(x)

    def mobilenet_v2():
        blocks, cin = [], 32
        for expansion, cout, repeats, stride in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                                                 (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)):
            for index in range(repeats):
                blocks.append(Inverted(cin, cout, stride if index == 0 else 1, expansion))
                cin = cout
        return nn.Sequential(conv_bn(3, 32, 3, 2, act=nn.ReLU6), *blocks, conv_bn(320, 1280, 1, act=nn.ReLU6),
                             nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(1280, 1000), nn.Softmax(-1))

    return {"ResNet50": resnet50, "MobileNetV2": mobilenet_v2}


def time_torch(name, batch, rounds):
    import torch

    model = _torch_models()[name]().eval()
    images = torch.rand(batch, 3, 224, 224) * 255

    def forward():
        with torch.no_grad():
            model(images)

    return _best(forward, rounds)


def _worker(framework, batch, rounds):
    timer = {"keras": time_keras, "torch": time_torch}[framework]
    print(json.dumps({name: timer(name, batch, rounds) for name in MODELS}))


def _others(python, batch, rounds):
    found = {}
    for framework in ("keras", "torch"):
        result = subprocess.run([python, os.path.abspath(__file__), "--worker", framework, "--batch", str(batch),
                                 "--rounds", str(rounds)], capture_output=True, text=True)
        lines = result.stdout.strip().splitlines()
        found[framework] = json.loads(lines[-1]) if result.returncode == 0 and lines else None
        if found[framework] is None:
            print(f"({framework} worker failed: {result.stderr.strip()[-300:]})")
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--other-python", default=DEFAULT_OTHER_PYTHON)
    parser.add_argument("--no-others", action="store_true")
    parser.add_argument("--worker", choices=("keras", "torch"))
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.worker:
        return _worker(args.worker, args.batch, args.rounds)
    others = {} if args.no_others or not os.path.exists(args.other_python) else \
        _others(args.other_python, args.batch, args.rounds)
    rows = []
    for name in MODELS:
        ours = time_minikeras(name, args.batch, args.rounds)
        row = {"model": name, "batch": args.batch, "minikeras_s": round(ours, 3)}
        for framework in ("keras", "torch"):
            theirs = (others.get(framework) or {}).get(name)
            row[f"{framework}_s"] = None if theirs is None else round(theirs, 3)
            row[f"minikeras/{framework}"] = None if theirs is None else round(ours / theirs, 2)
        rows.append(row)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _report import report

    report("bench_applications", rows, ["model", "batch", "minikeras_s", "keras_s", "torch_s", "minikeras/keras",
                                        "minikeras/torch"], path=args.json)


if __name__ == "__main__":
    main()
