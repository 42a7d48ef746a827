"""The PyTorch runners of benchmarks/gpu_models_bench.py: what a torch user
on a GPU would write instead.

* ``torch``: an eager loop; channels_last and ``cudnn.benchmark`` for the
  convolutional models, ``torch.autocast(bfloat16)`` for the bf16 cases;
* ``torch-graphs``: the same step (forward, backward, a capturable Adam)
  captured once as a CUDA graph and replayed (PyTorch's whole-network
  capture recipe; a GPU only);
* ``torch-compile``: the eager loop over ``torch.compile(model)`` (not in the
  default set: compiling ResNet-50 takes a minute or more).

The models are the Keras ones layer for layer: anchors.py's three, a
ResNet-50 v1 as Keras builds it (biased convolutions, BatchNorm epsilon
1.001e-5, the stride on each stage's first 1x1 convolution), torch's own
post-norm ``TransformerEncoderLayer`` (ReLU, no dropout) and torchvision's
EfficientNet-B0 (when torchvision is installed). Timing as the Keras runners:
warm-up steps, two epochs each ended by a synchronisation (the better one
counts), then single synchronised steps (their median is the latency).
Batches are uploaded from pinned host memory, as a DataLoader with
``pin_memory=True`` does.
"""
import contextlib
import statistics
import time

from gpu_models_specs import LEARNING_RATE, SMALL_RESNET_STAGES, TRANSFORMER, synthetic_data

KERAS_BATCH_NORM_EPSILON = 1.001e-5


def availability(framework, device):
    """``(torch, None)`` or ``(None, reason)``."""
    if framework == "torch-graphs" and device != "gpu":
        return None, "CUDA graphs need a GPU"
    try:
        import torch
    except ImportError:
        return None, "PyTorch is not installed"
    if device == "gpu" and not torch.cuda.is_available():
        return None, "torch sees no CUDA device"
    return torch, None


def version(torch):
    cudnn = torch.backends.cudnn.version() if torch.cuda.is_available() else None
    return f"torch {torch.__version__}" + (f", cuDNN {cudnn}" if cudnn else "")


def run_case(framework, torch, case, device):
    """Trains ``case``'s model; returns the row's measurements."""
    target = torch.device("cuda:0" if device == "gpu" else "cpu")
    on_gpu = target.type == "cuda"
    if not on_gpu:
        torch.set_num_threads(1)  # the CPU run is a smoke test: no thread contention on a shared machine
    torch.backends.cuda.matmul.allow_tf32 = case.tf32
    torch.backends.cudnn.allow_tf32 = case.tf32
    torch.backends.cudnn.benchmark = case.convolutional
    torch.manual_seed(0)
    sync = torch.cuda.synchronize if on_gpu else (lambda: None)
    x, y = synthetic_data(case)
    host_x, host_y = torch.from_numpy(x), torch.from_numpy(y).long()
    if on_gpu:
        host_x, host_y = host_x.pin_memory(), host_y.pin_memory()
    if host_x.ndim == 4:
        host_x = host_x.permute(0, 3, 1, 2)  # NCHW with channels-last strides: no copy
    memory_format = torch.channels_last if case.convolutional else torch.contiguous_format
    model = torch_model(torch, case).to(target, memory_format=memory_format)
    if framework == "torch-compile":
        model = torch.compile(model)
    loss_fn = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE, capturable=framework == "torch-graphs")

    def autocast():
        if case.precision != "bf16":
            return contextlib.nullcontext()
        return torch.autocast(target.type, dtype=torch.bfloat16, cache_enabled=framework != "torch-graphs")

    def upload(step):
        step %= case.steps
        batch = slice(step * case.batch, (step + 1) * case.batch)
        return host_x[batch].to(target, non_blocking=True), host_y[batch].to(target, non_blocking=True)

    def eager_step(step):
        inputs, labels = upload(step)
        optimizer.zero_grad(set_to_none=True)
        with autocast():
            loss = loss_fn(model(inputs), labels)
        loss.backward()
        optimizer.step()
        return loss

    if framework == "torch-graphs":
        run_step = _graphed_step(torch, model, loss_fn, optimizer, upload, autocast, case.warmup_steps)
    else:
        run_step = eager_step
        for step in range(case.warmup_steps):
            eager_step(step)
    sync()
    epochs = []
    for _ in range(2):
        start = time.perf_counter()
        for step in range(case.steps):
            loss = run_step(step)
        sync()
        epochs.append(time.perf_counter() - start)
    latencies = []
    for step in range(case.latency_steps):
        start = time.perf_counter()
        run_step(step)
        sync()
        latencies.append(time.perf_counter() - start)
    best = min(epochs)
    return dict(epoch_s=epochs, fit_ms_per_step=1e3 * best / case.steps, samples_per_s=case.steps * case.batch / best,
                latency_ms=1e3 * statistics.median(latencies), final_loss=float(loss.detach().float().cpu()),
                parameters=sum(p.numel() for p in model.parameters()))


def _graphed_step(torch, model, loss_fn, optimizer, upload, autocast, warmup_steps):
    """Captures forward, backward and the optimizer step as one CUDA graph;
    returns a step that copies a batch into its static inputs and replays it."""
    static_x, static_y = (tensor.clone() for tensor in upload(0))
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up on a side stream, as capture requires
        for _ in range(warmup_steps):
            optimizer.zero_grad(set_to_none=True)
            with autocast():
                loss = loss_fn(model(static_x), static_y)
            loss.backward()
            optimizer.step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    optimizer.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        with autocast():
            static_loss = loss_fn(model(static_x), static_y)
        static_loss.backward()
        optimizer.step()

    def step(index):
        inputs, labels = upload(index)
        static_x.copy_(inputs)
        static_y.copy_(labels)
        graph.replay()
        return static_loss

    return step


# ---------------------------------------------------------------------- models

def torch_model(torch, case):
    """``case``'s model in torch, ending in logits."""
    nn = torch.nn
    if case.model in ("mlp", "cnn", "cifar_cnn"):
        from anchors import _torch_model

        return _torch_model(case.model)
    if case.model == "resnet50":
        stages = SMALL_RESNET_STAGES if case.small else ((64, 3), (128, 4), (256, 6), (512, 3))
        return _keras_resnet_v1(nn, stages, case.classes)
    if case.model == "transformer":
        depth, width, heads, vocabulary = TRANSFORMER[case.small]
        return _Transformer(nn, depth, width, heads, vocabulary, case.classes)
    if case.model == "efficientnet_b0":
        import torchvision  # ImportError: the row says torchvision is missing

        return torchvision.models.efficientnet_b0(num_classes=case.classes)
    raise ValueError(f"torch_model expects a model of gpu_models_specs.MODELS, received {case.model!r}")


def _conv_bn(nn, inputs, filters, kernel, stride=1, relu=True):
    parts = [nn.Conv2d(inputs, filters, kernel, stride=stride, padding=kernel // 2),
             nn.BatchNorm2d(filters, eps=KERAS_BATCH_NORM_EPSILON)]
    return nn.Sequential(*parts, nn.ReLU(inplace=True)) if relu else nn.Sequential(*parts)


def _keras_resnet_v1(nn, stages, classes):
    """ResNet v1 as Keras's ``ResNet50`` builds it (stages: (filters, blocks))."""

    class Bottleneck(nn.Module):
        def __init__(self, inputs, filters, stride, projection):
            super().__init__()
            self.shortcut = _conv_bn(nn, inputs, 4 * filters, 1, stride, relu=False) if projection else None
            self.body = nn.Sequential(_conv_bn(nn, inputs, filters, 1, stride), _conv_bn(nn, filters, filters, 3),
                                      _conv_bn(nn, filters, 4 * filters, 1, relu=False))
            self.relu = nn.ReLU(inplace=True)

        def forward(self, x):
            shortcut = x if self.shortcut is None else self.shortcut(x)
            return self.relu(self.body(x) + shortcut)

    blocks = [_conv_bn(nn, 3, 64, 7, 2), nn.MaxPool2d(3, 2, padding=1)]
    inputs = 64
    for index, (filters, count) in enumerate(stages):
        for block in range(count):
            stride = 2 if index > 0 and block == 0 else 1
            blocks.append(Bottleneck(inputs, filters, stride, projection=block == 0))
            inputs = 4 * filters
    return nn.Sequential(*blocks, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(inputs, classes))


def _Transformer(nn, depth, width, heads, vocabulary, classes):
    class TransformerClassifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(vocabulary, width)
            layer = nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0, activation="relu",
                                               layer_norm_eps=1e-5, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
            self.head = nn.Linear(width, classes)

        def forward(self, tokens):
            return self.head(self.encoder(self.embedding(tokens)).mean(dim=1))

    return TransformerClassifier()
