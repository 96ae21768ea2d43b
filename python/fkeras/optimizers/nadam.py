"""Nadam (Keras 3).

The momentum schedule u_t = b1 (1 - 0.5 * 0.96^t) and its running product (kept here, a
scalar variable saved with the optimizer) feed nadam_update:
m_hat = u_{t+1} m / (1 - prod_{t+1}) + (1 - u_t) g / (1 - prod_t), v_hat = v / (1 - b2^t),
w -= lr m_hat / (sqrt(v_hat) + eps).
"""

from fkeras.optimizers.optimizer import Optimizer
from fkeras.optimizers.state import ScalarVariable


class Nadam(Optimizer):
    """Nadam (Adam with Nesterov momentum).

    Args:
        learning_rate: float or schedule. Defaults to 0.001.
        beta_1, beta_2: Defaults 0.9, 0.999.
        epsilon: Defaults to 1e-7.
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 name="nadam", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self._u_product = ScalarVariable(1.0, "u_product", dtype="float32")
        self._extra_scalars = [self._u_product]

    def _slot_calls(self):
        return [("momentum", "velocity")]

    def _u(self, step):
        return self.beta_1 * (1.0 - 0.5 * 0.96 ** step)

    def _before_update(self, step):
        self._u_product.assign(float(self._u_product._value) * self._u(step))

    def _update(self, g, lr, step, weight_decay):
        s = g.slots
        g.dev.kernels["nadam_update"](g.param, s["momentum"], s["velocity"], g.grad, g.n, lr,
                                      float(self.beta_1), float(self.beta_2),
                                      float(self.epsilon), step, self._u(step),
                                      self._u(step + 1), float(self._u_product._value),
                                      weight_decay)

    def get_config(self):
        config = super().get_config()
        config.update({"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon})
        return config
