"""RMSprop (Keras 3): epsilon inside the square root.

v = rho v + (1 - rho) g^2; centered: a = rho a + (1 - rho) g and the denominator is
sqrt(v - a^2 + epsilon), else sqrt(v + epsilon); step = lr g / denominator; with momentum
mom = momentum mom + step and w -= mom, else w -= step. Kernel: rmsprop_update.
"""

from fkeras.optimizers.optimizer import Optimizer


class RMSprop(Optimizer):
    """RMSprop.

    Args:
        learning_rate: float or schedule. Defaults to 0.001.
        rho: discounting factor of the squared-gradient average (0.9).
        momentum: Defaults to 0.
        epsilon: Defaults to 1e-7.
        centered: normalize by the estimated variance of the gradient.
    """

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7,
                 centered=False, name="rmsprop", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        self.rho = rho
        self.momentum = momentum
        self.epsilon = epsilon
        self.centered = centered

    def _slot_calls(self):
        calls = [("velocity",)]
        if self.momentum > 0:
            calls.append(("momentum",))
        if self.centered:
            calls.append(("average_gradient",))
        return calls

    def _update(self, g, lr, step, weight_decay):
        s = g.slots
        g.dev.kernels["rmsprop_update"](g.param, s["velocity"], s.get("momentum"),
                                        s.get("average_gradient"), g.grad, g.n, lr,
                                        float(self.rho), float(self.momentum),
                                        float(self.epsilon), bool(self.centered), weight_decay)

    def get_config(self):
        config = super().get_config()
        config.update({"rho": self.rho, "momentum": self.momentum, "epsilon": self.epsilon,
                       "centered": self.centered})
        return config
