"""The autograd engine: Tensor, Function, backward, no_grad, gradcheck."""
from minikeras.autograd.engine import backward, sum_to_shape
from minikeras.autograd.function import Function
from minikeras.autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from minikeras.autograd.tensor import Tensor, tensor
from minikeras.autograd.gradcheck import gradcheck, numerical_grad
from minikeras.autograd.operators import install_stand_ins

install_stand_ins(Tensor)  # until minikeras.ops binds Tensor's operators to its ops (autograd/operators.py)
