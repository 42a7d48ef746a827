"""The steps of benchmarks/gpu_session.py, per device call (its docstring has
the plan for the lease and what the lead types); the runner is there.

A step is ``Step(name, argv, limit, environment, json)``: ``limit`` is its
seconds, or ``REST`` for what is left of the call's budget less the limits
of the steps after it; ``json`` is the file the step writes its numbers to
(the runner embeds it in summary.json, so that few files come back: the
device tool returns at most 8). ``{json}`` and ``{budget}`` in ``argv`` are
replaced by the runner: the path of that file, and the seconds the step is
given less ``MARGIN`` (for a step with its own budget, to write its table).
"""
import collections
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
Step = collections.namedtuple("Step", "name argv limit environment json")
REST = None  # a step's limit: what is left, less the limits of the steps after it
JSON = "{json}"
BUDGET = "{budget}"
MARGIN = 20  # seconds a step with its own --budget keeps, past it, to write its table
CHECKS = ["pools", "ownership", "nccl", "mirrored"]
# Fashion-MNIST's four files, when carried to the GPU machine in this ignored
# folder (``.data/mk/datasets/fashion-mnist/``; the machine has no network).
REAL_DATA = os.path.join(ROOT, ".data", "mk")
# The suite's directories in the order they run (xdist hands tests out in
# collection order, so a suite stopped at its limit has run these first):
# what has never run on a card (issue 33's kernels, cuDNN and cuBLAS calls,
# the device layer, mixed precision, the captured step) before the rest.
SUITE_FIRST = ["kernels", "device", "backend", "mixed_precision", "models", "distribute", "optimizers", "ops",
               "layers", "applications"]
# Per call: the seconds its budget defaults to (gpu_session.py's docstring: the plan).
CALL_BUDGETS = {1: 450, 2: 230}
MODELS = ["resnet50", "cifar_cnn", "cnn", "mlp"]  # issue 33 §1's rows (the Transformer is beyond it)
# TF32 on: the fp32 models whose step is arithmetic; the MLP's and the Fashion
# CNN's are host-bound on a card (0.2-1.6 ms of GPU work in 2.6-6.2 ms a step,
# benchmarks/NOTES.md, 2026-11-26): TF32 cannot move them.
TF32_MODELS = ["resnet50", "cifar_cnn"]


def suite_paths():
    """tests/'s entries, SUITE_FIRST first, then the others in name order (not tests/examples)."""
    entries = sorted(name for name in os.listdir(os.path.join(ROOT, "tests"))
                     if (os.path.isdir(os.path.join(ROOT, "tests", name)) and not name.startswith(("_", ".")))
                     or (name.startswith("test_") and name.endswith(".py")))
    rest = [name for name in entries if name not in SUITE_FIRST and name != "examples"]
    return [os.path.join("tests", name) for name in SUITE_FIRST + rest if name in entries]


def real_data_carried():
    return os.path.isdir(os.path.join(REAL_DATA, "datasets", "fashion-mnist"))


def card_steps(call, python):
    """The steps of device call ``call`` (1: the models; 2: the rest) on the card."""
    pytest = [python, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"]
    checks = [python, os.path.join("benchmarks", "gpu_session_checks.py")]
    if call == 1:
        # Every framework's own memory policy, as users get.
        return [Step("models", [python, os.path.join("benchmarks", "gpu_models_bench.py"), "--budget", BUDGET,
                                "--tf32", "both", "--tf32-models"] + TF32_MODELS + ["--models"] + MODELS
                     + ["--json", JSON], REST, {},
                     "gpu_models.json")]
    workers = str(max(2, min(14, (os.cpu_count() or 4) - 2)))
    examples = pytest + ["tests/examples/test_examples.py"]
    # The examples' tests rebuild the devices between examples, which a
    # user's process never does: an array an earlier example left alive would
    # pin that example's up-front reserve. Growing on demand, they don't.
    grow = {"TF_FORCE_GPU_ALLOW_GROWTH": "true"}
    # Limits: about twice what each step took on an H200 (2026-11-26, whose
    # host is slower than the H100's), more for the steps before the suite
    # (a step that ends early leaves its time to the suite; the limits of the
    # steps after it are taken from the suite's); prefetch's a guess.
    planned = [
        Step("env", checks + ["env"], 15, {}, None),
        Step("kernels", [python, os.path.join("benchmarks", "gpu_kernel_floors.py"), "--json", JSON], 45, {},
             "gpu_kernels.json"),
        Step("cudnn", [python, os.path.join("benchmarks", "gpu_cudnn_probe.py"), "--json", JSON], 30, {},
             "gpu_cudnn.json"),
        Step("prefetch", [python, os.path.join("benchmarks", "bench_prefetch.py"), "--model", "tiny", "cnn",
                          "--batch", "128", "--steps", "40", "--rounds", "5", "--device", "gpu:0", "--json", JSON],
             40, {}, "gpu_prefetch.json"),
        Step("graph", [python, os.path.join("benchmarks", "gpu_graph_check.py"), "--json", JSON], 40, {},
             "gpu_graph.json"),
        Step("checks", checks + CHECKS, 30, {}, None),
        Step("examples-cold", examples, 30, grow, None),
        # The GPU half of the suite, sharded over processes that share the GPU.
        Step("suite", pytest + ["--device-kind", "gpu", "-n", workers, "--junitxml", JSON] + suite_paths(), REST,
             grow, "suite.xml"),
        Step("examples-warm", examples, 15, grow, None),
        Step("profile", [python, os.path.join("benchmarks", "gpu_profile.py"), "--cprofile", "--json", JSON], 25,
             {}, "gpu_profile.json"),
        Step("bench", [python, os.path.join("benchmarks", "gpu_bench.py"), "--steps", "50", "--json", JSON], 30, {},
             "gpu_bench.json"),
    ]
    if real_data_carried():
        # The CNN example on the real dataset, against its CPU accuracy (README: 0.9164).
        planned.append(Step("cnn-real", [python, os.path.join("examples", "mnist_cnn.py"), "--dataset",
                                         "fashion_mnist", "--device", "gpu:0", "--verbose", "0"], 50,
                            {"MINIKERAS_HOME": REAL_DATA}, None))
    return planned


def dry_steps(call, python):
    """Call ``call``'s steps, small, on the simulated GPU (or the CPU where a
    step has no simulated path): what needs a card says so in its line."""
    simulated = {"MINIKERAS_SIMULATED_GPU": "1"}
    pytest = [python, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"]
    checks = [python, os.path.join("benchmarks", "gpu_session_checks.py")]
    if call == 1:
        return [Step("models", [python, os.path.join("benchmarks", "gpu_models_bench.py"), "--budget", BUDGET,
                                "--tf32", "both", "--small", "--steps", "2", "--models", "mlp", "transformer",
                                "--frameworks", "minikeras", "minikeras-jit",
                                "--json", JSON], 150, simulated, "gpu_models.json")]
    examples = pytest + ["tests/examples/test_examples.py", "-k", "test_help"]
    return [
        Step("env", checks + ["env", "--simulated"], 60, {}, None),
        Step("kernels", [python, os.path.join("benchmarks", "gpu_kernel_floors.py"), "--dry-run", "--json", JSON], 60,
             {}, "gpu_kernels.json"),
        Step("cudnn", [python, os.path.join("benchmarks", "gpu_cudnn_probe.py"), "--json", JSON], 60, {},
             "gpu_cudnn.json"),
        Step("prefetch", [python, os.path.join("benchmarks", "bench_prefetch.py"), "--model", "tiny", "cnn",
                          "--batch", "8", "--steps", "4", "--rounds", "2", "--device", "gpu:0", "--json", JSON],
             90, simulated, "gpu_prefetch.json"),
        Step("graph", [python, os.path.join("benchmarks", "gpu_graph_check.py"), "--models", "mlp", "--steps", "3",
                       "--json", JSON], 90, simulated, "gpu_graph.json"),
        Step("checks", checks + CHECKS + ["--simulated"], 120, {}, None),
        Step("examples-cold", examples, 60, simulated, None),
        Step("suite", pytest + ["--device-kind", "gpu", "-n", "2", "--junitxml", JSON,
                                "tests/device/test_simulated_streams.py"], REST, simulated, "suite.xml"),
        Step("examples-warm", examples, 60, simulated, None),
        Step("profile", [python, os.path.join("benchmarks", "gpu_profile.py"), "--models", "mlp", "--json", JSON],
             60, {}, "gpu_profile.json"),
        Step("bench", [python, os.path.join("benchmarks", "gpu_bench.py"), "--device", "cpu", "--steps", "2",
                       "--models", "mlp", "--runners", "minikeras", "--json", JSON], 120, {}, "gpu_bench.json"),
    ]


def steps(call, dry_run, python):
    return (dry_steps if dry_run else card_steps)(call, python)
