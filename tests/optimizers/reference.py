"""Hand-written NumPy references of the Keras 3 update rules, written
directly from the formulas (out-of-place, float64), independent of the
in-place implementations they check."""
import numpy as np


class ReferenceOptimizer:
    """Replays one Keras optimizer on a list of NumPy weights.

    Args:
        kind: lower-case optimizer name.
        learning_rate: a float or a callable ``step -> lr``.
        **hyper: the optimizer's hyperparameters (Keras defaults when absent).
    """

    DEFAULTS = {
        "sgd": dict(learning_rate=0.01, momentum=0.0, nesterov=False),
        "adam": dict(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False),
        "adamw": dict(learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False),
        "rmsprop": dict(learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False),
        "adagrad": dict(learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7),
        "adadelta": dict(learning_rate=0.001, rho=0.95, epsilon=1e-7),
        "nadam": dict(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7),
        "adamax": dict(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7),
    }

    def __init__(self, kind, **hyper):
        self.kind = kind
        self.h = dict(self.DEFAULTS[kind])
        self.h.update(hyper)
        self.h.setdefault("weight_decay", None)
        self.iterations = 0
        self.slots = None
        self.u_product = 1.0

    def lr(self):
        learning_rate = self.h["learning_rate"]
        return learning_rate(self.iterations) if callable(learning_rate) else learning_rate

    def step(self, weights, grads):
        """Return the new weights (float64) after one step."""
        weights = [np.asarray(w, np.float64) for w in weights]
        grads = [np.asarray(g, np.float64) for g in grads]
        if self.slots is None:
            self.slots = [self._new_slots(w) for w in weights]
        lr = self.lr()
        if self.h["weight_decay"] is not None:
            weights = [w - w * self.h["weight_decay"] * lr for w in weights]
        if self.kind == "nadam":
            t = self.iterations + 1
            self.u_product = self.u_product * self.h["beta_1"] * (1 - 0.5 * 0.96**t)
        out = [getattr(self, "_" + self.kind)(w, g, s, lr) for w, g, s in zip(weights, grads, self.slots)]
        self.iterations += 1
        return out

    def _new_slots(self, w):
        zeros = np.zeros_like(w)
        if self.kind == "adagrad":
            return {"acc": np.full_like(w, self.h["initial_accumulator_value"])}
        return {"m": zeros.copy(), "v": zeros.copy(), "vhat": zeros.copy(), "a": zeros.copy()}

    def _sgd(self, w, g, s, lr):
        mom = self.h["momentum"]
        if mom == 0:
            return w - lr * g
        s["m"] = mom * s["m"] - lr * g
        if self.h["nesterov"]:
            return w + mom * s["m"] - lr * g
        return w + s["m"]

    def _adam(self, w, g, s, lr):
        b1, b2, eps = self.h["beta_1"], self.h["beta_2"], self.h["epsilon"]
        t = self.iterations + 1
        alpha = lr * np.sqrt(1 - b2**t) / (1 - b1**t)
        s["m"] = s["m"] + (g - s["m"]) * (1 - b1)
        s["v"] = s["v"] + (g * g - s["v"]) * (1 - b2)
        v = s["v"]
        if self.h["amsgrad"]:
            s["vhat"] = np.maximum(s["vhat"], s["v"])
            v = s["vhat"]
        return w - alpha * s["m"] / (np.sqrt(v) + eps)

    _adamw = _adam

    def _rmsprop(self, w, g, s, lr):
        rho, eps = self.h["rho"], self.h["epsilon"]
        s["v"] = rho * s["v"] + (1 - rho) * g * g
        if self.h["centered"]:
            s["a"] = rho * s["a"] + (1 - rho) * g
            denominator = s["v"] - s["a"] ** 2 + eps
        else:
            denominator = s["v"] + eps
        increment = lr * g / np.sqrt(denominator)
        if self.h["momentum"] > 0:
            s["m"] = self.h["momentum"] * s["m"] + increment
            return w - s["m"]
        return w - increment

    def _adagrad(self, w, g, s, lr):
        s["acc"] = s["acc"] + g * g
        return w - lr * g / np.sqrt(s["acc"] + self.h["epsilon"])

    def _adadelta(self, w, g, s, lr):
        rho, eps = self.h["rho"], self.h["epsilon"]
        s["m"] = rho * s["m"] + (1 - rho) * g * g  # accumulated gradient
        delta = -np.sqrt(s["v"] + eps) * g / np.sqrt(s["m"] + eps)
        s["v"] = rho * s["v"] + (1 - rho) * delta * delta  # accumulated delta
        return w + lr * delta

    def _nadam(self, w, g, s, lr):
        b1, b2, eps = self.h["beta_1"], self.h["beta_2"], self.h["epsilon"]
        t = self.iterations + 1
        u_t = b1 * (1 - 0.5 * 0.96**t)
        u_t_1 = b1 * (1 - 0.5 * 0.96 ** (t + 1))
        u_product_t = self.u_product
        u_product_t_1 = u_product_t * u_t_1
        s["m"] = s["m"] + (g - s["m"]) * (1 - b1)
        s["v"] = s["v"] + (g * g - s["v"]) * (1 - b2)
        m_hat = u_t_1 * s["m"] / (1 - u_product_t_1) + (1 - u_t) * g / (1 - u_product_t)
        v_hat = s["v"] / (1 - b2**t)
        return w - m_hat * lr / (np.sqrt(v_hat) + eps)

    def _adamax(self, w, g, s, lr):
        b1, b2, eps = self.h["beta_1"], self.h["beta_2"], self.h["epsilon"]
        t = self.iterations + 1
        s["m"] = s["m"] + (g - s["m"]) * (1 - b1)
        s["v"] = np.maximum(b2 * s["v"], np.abs(g))
        return w - lr * s["m"] / ((1 - b1**t) * (s["v"] + eps))
