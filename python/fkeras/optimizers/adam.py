"""Adam (Keras 3): epsilon is added to the uncorrected sqrt(v).

m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2 (amsgrad: vhat = max(vhat, v), used for v);
w -= lr * sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + epsilon). Kernel: adam_update.
"""

from fkeras.optimizers.optimizer import Optimizer


class Adam(Optimizer):
    """Adam.

    Args:
        learning_rate: float or schedule. Defaults to 0.001.
        beta_1, beta_2: decay rates of the moment estimates (0.9, 0.999).
        epsilon: Defaults to 1e-7 (Keras; PyTorch uses 1e-8).
        amsgrad: whether to keep the maximum of past second moments.
        **kwargs: the base optimizer arguments (weight_decay, clipnorm, ...).
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, name="adam", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.amsgrad = amsgrad

    def _slot_calls(self):
        calls = [("momentum", "velocity")]
        if self.amsgrad:
            calls.append(("velocity_hat",))
        return calls

    def _update(self, g, lr, step, weight_decay):
        s = g.slots
        g.dev.kernels["adam_update"](g.param, s["momentum"], s["velocity"],
                                     s.get("velocity_hat"), g.grad, g.n, lr,
                                     float(self.beta_1), float(self.beta_2),
                                     float(self.epsilon), step, weight_decay)

    def get_config(self):
        config = super().get_config()
        config.update({"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon,
                       "amsgrad": self.amsgrad})
        return config
