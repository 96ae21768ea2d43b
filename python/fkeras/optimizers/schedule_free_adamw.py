"""ScheduleFreeAdamW (Keras 3.15). The "momentum" slot is z (initialised to the weights); the
variable holds y. Kernel: schedule_free_adamw_update.

Keras 3.15 on the torch backend reads z's "old" value after its in-place update (the new z);
JAX/TensorFlow read the old z. fkeras follows the torch backend's numbers.
"""

from fkeras.optimizers.optimizer import Optimizer


class ScheduleFreeAdamW(Optimizer):
    """Schedule-free AdamW.

    Args:
        learning_rate: float or schedule. Defaults to 0.0025.
        beta_1, beta_2: Defaults 0.9, 0.999.
        epsilon: Defaults to 1e-8.
        warmup_steps: linear learning-rate warmup over this many steps (0: none).
        **kwargs: the base optimizer arguments.
    """

    def __init__(self, learning_rate=0.0025, beta_1=0.9, beta_2=0.999, epsilon=1e-8,
                 warmup_steps=0, name=None, **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.warmup_steps = warmup_steps

    def _slot_calls(self):
        return [("momentum", "velocity")]

    def build(self, variables):
        if self.built:
            return
        super().build(variables)
        for g in self._groups:
            g.slots["momentum"][...] = g.param

    def _update(self, g, lr, step, weight_decay):
        s = g.slots
        g.dev.kernels["schedule_free_adamw_update"](
            g.param, s["momentum"], s["velocity"], g.grad, g.n, lr, float(self.beta_1),
            float(self.beta_2), float(self.epsilon), step, int(self.warmup_steps), weight_decay)

    def get_config(self):
        config = super().get_config()
        config.update({"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon,
                       "warmup_steps": self.warmup_steps})
        return config
