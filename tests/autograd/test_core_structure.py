"""The autograd core's shape: imports in one direction, one construction
path for tensors from arrays, no private state read across modules."""
import ast
import pathlib
import subprocess
import sys

import numpy
import pytest

import minikeras
from minikeras.autograd import Tensor
from minikeras.autograd.tensor import from_array
from minikeras.device import registry

_AUTOGRAD = pathlib.Path(minikeras.__file__).parent / "autograd"


def _module_level_imports_after_code(path):
    """Module-level imports that come after the first def or class."""
    tree = ast.parse(path.read_text())
    seen_code, late = False, []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            seen_code = True
        elif seen_code and isinstance(node, (ast.Import, ast.ImportFrom)):
            late.append(node.lineno)
    return late


@pytest.mark.parametrize("path", sorted(_AUTOGRAD.glob("*.py")), ids=lambda path: path.name)
def test_no_import_at_the_bottom_of_an_autograd_module(path):
    assert _module_level_imports_after_code(path) == []


def test_tensor_module_imports_nothing_else_of_autograd():
    tree = ast.parse((_AUTOGRAD / "tensor.py").read_text())
    modules = [node.module for node in tree.body if isinstance(node, ast.ImportFrom)]
    modules += [alias.name for node in tree.body if isinstance(node, ast.Import) for alias in node.names]
    assert not [name for name in modules if name and name.startswith("minikeras.autograd")]


@pytest.mark.parametrize("first", ["tensor", "engine", "function", "transfer", "tape"])
def test_each_core_module_imports_first_in_a_fresh_process(first):
    code = f"import minikeras.autograd.{first}; import minikeras; print(minikeras.tensor([1.0]).numpy())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=pathlib.Path(minikeras.__file__).parent.parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[1.]"


def test_constructor_and_from_array_fill_the_same_fields():
    device = registry.default_device()
    made = Tensor(numpy.ones(3, numpy.float32))
    with device.activate():
        wrapped = from_array(device.asarray(numpy.ones(3, numpy.float32)), device)
    for tensor in (made, wrapped, made.detach()):
        assert tensor.device is device and tensor.grad is None and tensor.is_leaf
        assert tensor.requires_grad is False and tensor.name is None and tensor._index == 0
    assert made.detach().data is made.data


def test_no_module_reads_private_state_of_scope_grad_mode_or_registry():
    package = pathlib.Path(minikeras.__file__).parent
    offenders = []
    for path in package.rglob("*.py"):
        if path.parent.name == "device" or path.name == "grad_mode.py":
            continue
        text = path.read_text()
        for needle in ("scope._local", "grad_mode._local", "registry._registry", "import _registry"):
            if needle in text:
                offenders.append(f"{path.relative_to(package)}: {needle}")
    assert offenders == []
