"""Muon: momentum orthogonalized by Newton-Schulz (Jordan et al., 2024), with
AdamW for the variables it does not suit."""
import math
import re

from minikeras.optimizers.optimizer import Optimizer


class Muon(Optimizer):
    """Muon, Keras 3 update rule. A 2-D variable (a Dense kernel) takes a
    momentum step whose matrix is replaced by its nearest semi-orthogonal
    matrix (five Newton-Schulz iterations), scaled to a fixed RMS::

        m = momentum * m + g;  u = g + momentum * m (nesterov) or m
        X = u / (||u||_F + 1e-7), transposed when taller than wide
        repeat ns_steps:  A = X X^T;  X = a X + (b A + c A A) X
        w -= lr * X * sqrt(max(rows, cols)) * rms_rate

    Every other variable (biases, convolution kernels, embeddings, names
    matching ``exclude_layers``) takes an AdamW step with
    ``lr * adam_lr_ratio`` and ``adam_weight_decay``.

    Args:
        learning_rate: a float, a LearningRateSchedule or a callable.
        adam_beta_1, adam_beta_2, epsilon: the AdamW moments' parameters.
        adam_weight_decay: the decoupled decay of the AdamW variables.
        weight_decay: the decoupled decay of the Muon variables.
        exclude_layers: regular expressions; variables whose path matches
            one use AdamW.
        exclude_embeddings: variables with "embedding" in their path use AdamW.
        muon_a, muon_b, muon_c: the Newton-Schulz polynomial.
        adam_lr_ratio: the AdamW learning rate as a fraction of ``learning_rate``.
        momentum: Muon's momentum (default 0.95).
        ns_steps: Newton-Schulz iterations (default 5).
        nesterov: use the Nesterov form of the momentum.
        rms_rate: the RMS the update is scaled to (None: no scaling).
        **kwargs: the base Optimizer arguments.
    """

    def __init__(self, learning_rate=0.001, adam_beta_1=0.9, adam_beta_2=0.999, adam_weight_decay=0.004,
                 epsilon=1e-7, weight_decay=0.004, name="muon", exclude_layers=None, exclude_embeddings=True,
                 muon_a=3.4445, muon_b=-4.7750, muon_c=2.0315, adam_lr_ratio=1, momentum=0.95, ns_steps=5,
                 nesterov=True, rms_rate=0.2, **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, weight_decay=weight_decay, **kwargs)
        self.adam_beta_1, self.adam_beta_2, self.epsilon = adam_beta_1, adam_beta_2, epsilon
        self.muon_a, self.muon_b, self.muon_c = muon_a, muon_b, muon_c
        self.adam_lr_ratio, self.momentum, self.ns_steps, self.nesterov = adam_lr_ratio, momentum, ns_steps, nesterov
        self.exclude_embeddings = exclude_embeddings
        self.exclude_layers = exclude_layers or []
        self.adam_weight_decay = adam_weight_decay
        self.rms_rate = rms_rate

    def _should_use_adamw(self, variable):
        if variable.ndim != 2:
            return True
        path = getattr(variable, "path", None) or variable.name or ""
        if self.exclude_embeddings and "embedding" in path.lower():
            return True
        return any(re.search(keyword, path) for keyword in self.exclude_layers)

    def build(self, variables):
        """Create a momentum slot per variable and a velocity slot for the
        AdamW ones, variable by variable (Keras's order)."""
        if self.built:
            return
        super().build(variables)
        self._momentums, self._adam_velocities = [], []
        for variable in variables:
            self._momentums.append(self.add_variable_from_reference(variable, "momentum"))
            uses_adamw = self._should_use_adamw(variable)
            self._adam_velocities.append(self.add_variable_from_reference(variable, "velocity") if uses_adamw
                                         else None)

    def update_step(self, gradient, variable, learning_rate):
        """One Muon (or AdamW) step on ``variable`` (in place)."""
        index = self.slot_index(variable)
        momentum, velocity = self._momentums[index], self._adam_velocities[index]
        if velocity is not None:
            self._adamw_step(gradient, variable, learning_rate * self.adam_lr_ratio, momentum, velocity)
        else:
            self._muon_step(gradient, variable, learning_rate, momentum)

    def _muon_step(self, gradient, variable, learning_rate, momentum):
        momentum *= self.momentum
        momentum += gradient
        direction = gradient + self.momentum * momentum if self.nesterov else momentum.copy()
        update = self._orthogonalized(variable.device.xp, direction)
        scale = learning_rate
        if self.rms_rate is not None:
            scale *= math.sqrt(max(variable.shape[0], variable.shape[1])) * self.rms_rate
        update *= scale
        variable.data -= update.astype(variable.dtype)

    def _orthogonalized(self, xp, matrix):
        """Newton-Schulz iterations towards the orthogonal factor of ``matrix``."""
        tall = matrix.shape[-2] > matrix.shape[-1]
        if tall:
            matrix = matrix.swapaxes(-2, -1)
        x = matrix / (xp.sqrt((matrix * matrix).sum(axis=(-2, -1), keepdims=True)) + 1e-7)
        for _ in range(self.ns_steps):
            gram = x @ x.swapaxes(-2, -1)
            x = self.muon_a * x + (self.muon_b * gram + self.muon_c * gram @ gram) @ x
        return x.swapaxes(-2, -1) if tall else x

    def _adamw_step(self, gradient, variable, learning_rate, momentum, velocity):
        step = self.iterations + 1
        alpha = learning_rate * math.sqrt(1 - self.adam_beta_2**step) / (1 - self.adam_beta_1**step)
        xp = variable.device.xp
        work, update = self.scratch(variable, 2)
        xp.subtract(gradient, momentum, out=work)
        work *= 1 - self.adam_beta_1
        momentum += work
        xp.multiply(gradient, gradient, out=work)
        work -= velocity
        work *= 1 - self.adam_beta_2
        velocity += work
        xp.sqrt(velocity, out=work)
        work += self.epsilon
        xp.multiply(momentum, alpha, out=update)
        update /= work
        variable.data -= update

    def _apply_weight_decay(self, variables, learning_rate):
        """Decoupled decay: ``adam_weight_decay`` for the AdamW variables,
        ``weight_decay`` for the Muon ones."""
        for variable in variables:
            if not self._use_weight_decay(variable):
                continue
            decay = self.adam_weight_decay if self._should_use_adamw(variable) else self.weight_decay
            if decay is None:
                continue
            with variable.device.activate():
                variable.data -= variable.data * (decay * learning_rate)

    def get_config(self):
        config = super().get_config()
        config.update({
            "adam_beta_1": self.adam_beta_1, "adam_beta_2": self.adam_beta_2, "epsilon": self.epsilon,
            "exclude_layers": self.exclude_layers, "muon_a": self.muon_a, "muon_b": self.muon_b,
            "muon_c": self.muon_c, "adam_lr_ratio": self.adam_lr_ratio, "momentum": self.momentum,
            "ns_steps": self.ns_steps, "nesterov": self.nesterov, "exclude_embeddings": self.exclude_embeddings,
            "adam_weight_decay": self.adam_weight_decay, "rms_rate": self.rms_rate,
        })
        return config
