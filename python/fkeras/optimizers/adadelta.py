"""Adadelta (Keras 3).

a = rho a + (1 - rho) g^2; delta = -sqrt(d + eps) / sqrt(a + eps) * g;
d = rho d + (1 - rho) delta^2; w += lr * delta. Kernel: adadelta_update.
"""

from fkeras.optimizers.optimizer import Optimizer


class Adadelta(Optimizer):
    """Adadelta.

    Args:
        learning_rate: float or schedule. Defaults to 0.001.
        rho: decay rate (0.95).
        epsilon: Defaults to 1e-7.
    """

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, name="adadelta",
                 **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def _slot_calls(self):
        return [("accumulated_grad", "accumulated_delta_var")]

    def _update(self, g, lr, step, weight_decay):
        s = g.slots
        g.dev.kernels["adadelta_update"](g.param, s["accumulated_grad"],
                                         s["accumulated_delta_var"], g.grad, g.n, lr,
                                         float(self.rho), float(self.epsilon), weight_decay)

    def get_config(self):
        config = super().get_config()
        config.update({"rho": self.rho, "epsilon": self.epsilon})
        return config
