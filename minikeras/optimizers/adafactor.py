"""Adafactor: adaptive rates with factored second moments (Shazeer & Stern, 2018)."""
import math

from minikeras.optimizers._slots import StateEntry
from minikeras.optimizers.optimizer import Optimizer


class Adafactor(Optimizer):
    """Adafactor, Keras 3 update rule. For a variable of rank >= 2 the
    second moment is kept as a row vector ``r`` and a column vector ``c``
    (memory ``O(n + m)`` instead of ``O(n m)``) and rebuilt as their outer
    product; smaller variables keep a full ``v``::

        t = iterations + 1
        lr = min(lr, 1 / sqrt(t))           (relative_step, constant lr only)
        rho = min(lr, 1 / sqrt(t));  alpha = max(epsilon_2, rms(w)) * rho
        g2 = g^2 + epsilon_1;  beta_2 = 1 - t^beta_2_decay
        r = beta_2 r + (1 - beta_2) mean(g2, -1);  c = beta_2 c + (1 - beta_2) mean(g2, -2)
        v = (r / mean(r)) outer c           (rank >= 2; else v = beta_2 v + (1 - beta_2) g2)
        u = g / sqrt(v);  w -= alpha * u / max(1, rms(u) / clip_threshold)

    Args:
        learning_rate: a float, a LearningRateSchedule or a callable.
        beta_2_decay: the exponent of the second-moment decay (default -0.8).
        epsilon_1: added to the squared gradients (default 1e-30).
        epsilon_2: the smallest weight scale (default 1e-3).
        clip_threshold: the update RMS above which updates are scaled down.
        relative_step: cap a constant learning rate at ``1 / sqrt(t)``.
        **kwargs: the base Optimizer arguments.
    """

    def __init__(self, learning_rate=0.001, beta_2_decay=-0.8, epsilon_1=1e-30, epsilon_2=1e-3, clip_threshold=1.0,
                 relative_step=True, name="adafactor", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        self.beta_2_decay, self.epsilon_1, self.epsilon_2 = beta_2_decay, epsilon_1, epsilon_2
        self.clip_threshold, self.relative_step = clip_threshold, relative_step

    def build(self, variables):
        """Create ``r``, ``c`` and a velocity slot per variable, in Keras's
        order (``r`` and ``c`` are 0-d and unused below rank 2)."""
        if self.built:
            return
        super().build(variables)
        self._r, self._c, self._v = [], [], []
        for variable in variables:
            if variable.ndim >= 2:
                shape = tuple(variable.shape)
                self._r.append(self._factor_slot(variable, "r", shape[:-1]))
                self._c.append(self._factor_slot(variable, "c", shape[:-2] + shape[-1:]))
            else:
                # Unused 0-d entries: Keras saves them too, so the layout matches.
                self._r.append(self._factor_slot(variable, "r", ()))
                self._c.append(self._factor_slot(variable, "c", ()))
            self._v.append(self.add_variable_from_reference(variable, "velocity"))

    def _factor_slot(self, variable, suffix, shape):
        device = variable.device
        with device.activate():
            array = device.xp.zeros(shape, dtype=variable.dtype)
        device.memory.track(array)
        label = variable.name or f"variable_{self.slot_index(variable)}"
        self._state.append(StateEntry(f"{label}_{suffix}".replace("/", "_"), array, device))
        return array

    def update_step(self, gradient, variable, learning_rate):
        """One Adafactor step on ``variable`` (in place)."""
        index = self.slot_index(variable)
        xp = variable.device.xp
        step = self.iterations + 1
        if not callable(self._learning_rate) and self.relative_step:
            learning_rate = min(learning_rate, 1 / math.sqrt(step))
        rho = min(learning_rate, 1 / math.sqrt(step))
        weights = variable.data
        alpha = xp.maximum(self.epsilon_2, xp.sqrt((weights * weights).mean())) * rho
        squared = gradient * gradient + self.epsilon_1
        beta_2 = 1.0 - step ** self.beta_2_decay
        velocity = self._v[index]
        if variable.ndim >= 2:
            rows, columns = self._r[index], self._c[index]
            rows *= beta_2
            rows += (1.0 - beta_2) * squared.mean(axis=-1)
            columns *= beta_2
            columns += (1.0 - beta_2) * squared.mean(axis=-2)
            velocity[...] = (rows / rows.mean(axis=-1, keepdims=True))[..., None] * columns[..., None, :]
        else:
            velocity *= beta_2
            velocity += (1.0 - beta_2) * squared
        update = gradient / xp.sqrt(velocity)
        scale = xp.maximum(1.0, xp.sqrt((update * update).mean()) / self.clip_threshold)
        update *= (alpha / scale).astype(update.dtype)
        weights -= update

    def get_config(self):
        config = super().get_config()
        config.update({"beta_2_decay": self.beta_2_decay, "epsilon_1": self.epsilon_1, "epsilon_2": self.epsilon_2,
                       "clip_threshold": self.clip_threshold, "relative_step": self.relative_step})
        return config
