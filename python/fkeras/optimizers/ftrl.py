"""Ftrl (Keras 3): follow-the-regularized-leader with L1/L2/shrinkage. Kernel: ftrl_update."""

from fkeras.optimizers.optimizer import Optimizer


class Ftrl(Optimizer):
    """FTRL-proximal.

    Args:
        learning_rate: float or schedule. Defaults to 0.001.
        learning_rate_power: <= 0 (-0.5).
        initial_accumulator_value: >= 0 (0.1), the accumulators' start.
        l1_regularization_strength, l2_regularization_strength,
        l2_shrinkage_regularization_strength: >= 0 (0.0).
        beta: added to l2 as beta / (2 lr) (0.0).
        **kwargs: the base optimizer arguments.
    """

    def __init__(self, learning_rate=0.001, learning_rate_power=-0.5,
                 initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, l2_shrinkage_regularization_strength=0.0,
                 beta=0.0, name=None, **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        for arg, value, sign in (
                ("initial_accumulator_value", initial_accumulator_value, "positive or zero"),
                ("l1_regularization_strength", l1_regularization_strength, "positive or zero"),
                ("l2_regularization_strength", l2_regularization_strength, "positive or zero"),
                ("l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength,
                 "positive or zero")):
            if value < 0.0:
                raise ValueError(f"`{arg}` needs to be {sign}. Received: {arg}={value}.")
        if learning_rate_power > 0.0:
            raise ValueError("`learning_rate_power` needs to be negative or zero. Received: "
                             f"learning_rate_power={learning_rate_power}.")
        self.learning_rate_power = learning_rate_power
        self.initial_accumulator_value = initial_accumulator_value
        self.l1_regularization_strength = l1_regularization_strength
        self.l2_regularization_strength = l2_regularization_strength
        self.l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength
        self.beta = beta

    def _slot_calls(self):
        return [("accumulator", "linear")]

    def _slot_init(self, name):
        return self.initial_accumulator_value if name == "accumulator" else 0.0

    def _update(self, g, lr, step, weight_decay):
        s = g.slots
        g.dev.kernels["ftrl_update"](
            g.param, s["accumulator"], s["linear"], g.grad, g.n, lr,
            float(self.learning_rate_power), float(self.l1_regularization_strength),
            float(self.l2_regularization_strength),
            float(self.l2_shrinkage_regularization_strength), float(self.beta), weight_decay)

    def get_config(self):
        config = super().get_config()
        config.update({
            "learning_rate_power": self.learning_rate_power,
            "initial_accumulator_value": self.initial_accumulator_value,
            "l1_regularization_strength": self.l1_regularization_strength,
            "l2_regularization_strength": self.l2_regularization_strength,
            "l2_shrinkage_regularization_strength": self.l2_shrinkage_regularization_strength,
            "beta": self.beta})
        return config
