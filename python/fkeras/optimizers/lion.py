"""Lion (Keras 3): c = b1 m + (1 - b1) g; w -= lr sign(c); m = b2 m + (1 - b2) g.
Kernel: lion_update."""

from fkeras.optimizers.optimizer import Optimizer


class Lion(Optimizer):
    """Lion (EvoLved Sign Momentum).

    Args:
        learning_rate: float or schedule. Defaults to 0.001.
        beta_1: rate of the interpolation giving the update's sign (0.9), in (0, 1].
        beta_2: momentum decay (0.99).
        **kwargs: the base optimizer arguments (weight_decay, clipnorm, ...).
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99, name=None, **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        if beta_1 <= 0 or beta_1 > 1:
            raise ValueError(
                "Argument `beta_1` must be in the [0, 1] range. Otherwise, the optimizer "
                f"degenerates to SignSGD. Received: beta_1={beta_1}.")
        self.beta_1 = beta_1
        self.beta_2 = beta_2

    def _slot_calls(self):
        return [("momentum",)]

    def _update(self, g, lr, step, weight_decay):
        g.dev.kernels["lion_update"](g.param, g.slots["momentum"], g.grad, g.n, lr,
                                     float(self.beta_1), float(self.beta_2), weight_decay)

    def get_config(self):
        config = super().get_config()
        config.update({"beta_1": self.beta_1, "beta_2": self.beta_2})
        return config
