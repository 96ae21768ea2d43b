"""Lamb (Keras 3): Adam moments and a per-variable trust ratio ||w|| / ||update||.
Kernel: lamb_update, one call per variable (the norms are per variable)."""

from fkeras.optimizers.optimizer import Optimizer


class Lamb(Optimizer):
    """Layer-wise adaptive moments (LAMB).

    Args:
        learning_rate: float or schedule. Defaults to 0.001.
        beta_1, beta_2: moment decay rates (0.9, 0.999).
        epsilon: Defaults to 1e-7.
        **kwargs: the base optimizer arguments.
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name=None,
                 **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon

    def _slot_calls(self):
        return [("momentum", "velocity")]

    def _update(self, g, lr, step, weight_decay):
        kernel = g.dev.kernels["lamb_update"]
        for off, size in _segments(g):
            sl = slice(off, off + size)
            kernel(g.param[sl], g.slots["momentum"][sl], g.slots["velocity"][sl], g.grad[sl],
                   size, lr, float(self.beta_1), float(self.beta_2), float(self.epsilon), step,
                   weight_decay)

    def get_config(self):
        config = super().get_config()
        config.update({"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon})
        return config


def _segments(g):
    """(offset, size) of each variable in a group or a per-variable segment."""
    if hasattr(g, "offsets"):
        return [(int(o), int(s)) for o, s in zip(g.offsets, g.sizes)]
    return [(0, g.n)]
