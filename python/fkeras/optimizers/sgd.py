"""SGD with optional (Nesterov) momentum (Keras 3).

momentum == 0: w -= lr * g. Otherwise v = momentum * v - lr * g, then w += v
(nesterov: w += momentum * v - lr * g). Kernel: sgd_update.
"""

from fkeras.optimizers.optimizer import Optimizer


class SGD(Optimizer):
    """Gradient descent (with momentum).

    Args:
        learning_rate: float or schedule. Defaults to 0.01.
        momentum: float >= 0. Defaults to 0.
        nesterov: whether to apply Nesterov momentum. Defaults to False.
        **kwargs: the base optimizer arguments (weight_decay, clipnorm, ...).
    """

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name="SGD", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        if not isinstance(momentum, (int, float)) or momentum < 0 or momentum > 1:
            raise ValueError("`momentum` must be a float between [0, 1].")
        self.momentum = momentum
        self.nesterov = nesterov

    def _slot_calls(self):
        return [("momentum",)] if self.momentum != 0 else []

    def _update(self, g, lr, step, weight_decay):
        velocity = g.slots.get("momentum")
        g.dev.kernels["sgd_update"](g.param, velocity, g.grad, g.n, lr, float(self.momentum),
                                    bool(self.nesterov), weight_decay)

    def get_config(self):
        config = super().get_config()
        config.update({"momentum": self.momentum, "nesterov": self.nesterov})
        return config
