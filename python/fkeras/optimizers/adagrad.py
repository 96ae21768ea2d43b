"""Adagrad (Keras 3): accumulator starts at 0.1; acc += g^2; w -= lr g / sqrt(acc + eps).
Kernel: adagrad_update."""

from fkeras.optimizers.optimizer import Optimizer


class Adagrad(Optimizer):
    """Adagrad.

    Args:
        learning_rate: float or schedule. Defaults to 0.001.
        initial_accumulator_value: Defaults to 0.1.
        epsilon: Defaults to 1e-7.
    """

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7,
                 name="adagrad", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        self.initial_accumulator_value = initial_accumulator_value
        self.epsilon = epsilon

    def _slot_calls(self):
        return [("accumulator",)]

    def _slot_init(self, name):
        return float(self.initial_accumulator_value)

    def _update(self, g, lr, step, weight_decay):
        g.dev.kernels["adagrad_update"](g.param, g.slots["accumulator"], g.grad, g.n, lr,
                                        float(self.epsilon), weight_decay)

    def get_config(self):
        config = super().get_config()
        config.update({"initial_accumulator_value": self.initial_accumulator_value,
                       "epsilon": self.epsilon})
        return config
