"""Each optimizer minimises a real function through the autograd engine."""
import numpy as np
import pytest

import minikeras as mk
from minikeras import optimizers

# An ill-conditioned quadratic: 0.5 * sum(scales * (w - target)**2), scales 1..10.
TARGET = np.array([1.0, -2.0, 3.0, 0.5], np.float32)
SCALES = np.array([1.0, 3.0, 10.0, 0.5], np.float32)

SETTINGS = [
    (optimizers.SGD, dict(learning_rate=0.1), 200),
    (optimizers.SGD, dict(learning_rate=0.05, momentum=0.9, nesterov=True), 200),
    (optimizers.Adam, dict(learning_rate=0.1), 300),
    (optimizers.AdamW, dict(learning_rate=0.1, weight_decay=1e-4), 300),
    (optimizers.RMSprop, dict(learning_rate=0.01, centered=True, momentum=0.5), 400),
    (optimizers.Adagrad, dict(learning_rate=0.5), 400),
    (optimizers.Adadelta, dict(learning_rate=10.0), 600),
    (optimizers.Nadam, dict(learning_rate=0.1), 300),
    (optimizers.Adamax, dict(learning_rate=0.2), 300),
]


def loss_of(w):
    diff = w - mk.Tensor(TARGET)
    return (mk.Tensor(SCALES) * diff * diff).sum() * 0.5


@pytest.mark.parametrize("cls,kwargs,steps", SETTINGS, ids=[c.__name__ + str(i) for i, (c, _, _) in enumerate(SETTINGS)])
def test_minimises_an_ill_conditioned_quadratic(cls, kwargs, steps):
    w = mk.Tensor(np.zeros(4, np.float32), requires_grad=True)
    optimizer = cls(**kwargs)
    start = float(loss_of(w).item())
    for _ in range(steps):
        w.grad = None
        loss = loss_of(w)
        loss.backward()
        optimizer.apply_gradients([(w.grad, w)])
    final = float(loss_of(w).item())
    assert final < 1e-3 * start, f"{cls.__name__}: loss {start:.3g} -> {final:.3g}"
    np.testing.assert_allclose(w.numpy(), TARGET, atol=0.05)
    assert w.dtype == np.float32
