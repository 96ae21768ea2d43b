"""Adamax (Keras 3): m = b1 m + (1 - b1) g; u = max(b2 u, |g|);
w -= lr m / ((1 - b1^t) (u + eps)). Kernel: adamax_update."""

from fkeras.optimizers.optimizer import Optimizer


class Adamax(Optimizer):
    """Adamax (Adam with the infinity norm).

    Args:
        learning_rate: float or schedule. Defaults to 0.001.
        beta_1, beta_2: Defaults 0.9, 0.999.
        epsilon: Defaults to 1e-7.
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 name="adamax", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon

    def _slot_calls(self):
        return [("momentum", "norm")]

    def _update(self, g, lr, step, weight_decay):
        s = g.slots
        g.dev.kernels["adamax_update"](g.param, s["momentum"], s["norm"], g.grad, g.n, lr,
                                       float(self.beta_1), float(self.beta_2),
                                       float(self.epsilon), step, weight_decay)

    def get_config(self):
        config = super().get_config()
        config.update({"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon})
        return config
