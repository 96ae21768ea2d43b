"""Adafactor (Keras 3). Variables of rank >= 2 keep factored second moments r (mean of
g^2 + eps1 over the last axis) and c (over the second-to-last), v = (r / mean(r)) outer c,
computed here with NumPy; rank < 2 keep a full v. The rest (weight decay, v for rank < 2,
rms(w), rms(g / sqrt(v)), the clipped step) is one adafactor_update call per variable.
State order, as Keras: per variable r, c (0-d zeros below rank 2), velocity.
"""

import numpy as np

from fkeras.optimizers.optimizer import Optimizer
from fkeras.optimizers.state import view_variable


class Adafactor(Optimizer):
    """Adafactor.

    Args:
        learning_rate: float or schedule. Defaults to 0.001.
        beta_2_decay: the second moment's decay is 1 - t^beta_2_decay (-0.8).
        epsilon_1: added to g^2 (1e-30). epsilon_2: floor of rms(w) (1e-3).
        clip_threshold: the update's RMS clip (1.0).
        relative_step: cap the learning rate at 1 / sqrt(t) (True; Keras 3 caps the step at
            min(lr, 1 / sqrt(t)) in either case).
        **kwargs: the base optimizer arguments.
    """

    native_update = False  # NumPy between the kernel calls: a host twin on a GPU

    def __init__(self, learning_rate=0.001, beta_2_decay=-0.8, epsilon_1=1e-30,
                 epsilon_2=1e-3, clip_threshold=1.0, relative_step=True, name=None, **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        self.beta_2_decay = beta_2_decay
        self.epsilon_1 = epsilon_1
        self.epsilon_2 = epsilon_2
        self.clip_threshold = clip_threshold
        self.relative_step = relative_step

    def _slot_calls(self):
        return [("velocity",)]

    def build(self, variables):
        if self.built:
            return
        super().build(variables)
        self._per_variable = False
        self._rc = {}
        for v in self._trainable_variables:
            shape = tuple(v.shape)
            if len(shape) < 2:
                r, c = np.zeros((), np.float32), np.zeros((), np.float32)
            else:
                r = np.zeros(shape[:-1], np.float32)
                c = np.zeros(shape[:-2] + shape[-1:], np.float32)
            self._rc[id(v)] = (r, c)

    @property
    def variables(self):
        out = super().variables
        if not self.built:
            return out
        result, k = [], 0
        for var in out:
            if var.name.startswith("velocity/"):
                tv = self._trainable_variables[k]
                k += 1
                r, c = self._rc[id(tv)]
                result += [view_variable(r, tv.name), view_variable(c, tv.name)]
            result.append(var)
        return result

    def _update(self, g, lr, step, weight_decay):
        kernel = g.dev.kernels["adafactor_update"]
        b2 = np.float32(1.0) - np.float32(step) ** np.float32(self.beta_2_decay)
        eps1 = np.float32(self.epsilon_1)
        for i, var in enumerate(g.variables):
            param, grad, vel = g.view(g.param, i), g.view(g.grad, i), g.view(
                g.slots["velocity"], i)
            factored = len(var.shape) >= 2
            if factored:
                r, c = self._rc[id(var)]
                sq = np.square(grad) + eps1
                r[...] = b2 * r + (1 - b2) * sq.mean(axis=-1)
                c[...] = b2 * c + (1 - b2) * sq.mean(axis=-2)
                vel[...] = (r / r.mean(axis=-1, keepdims=True))[..., None] * c[..., None, :]
            kernel(param.reshape(-1), vel.reshape(-1), grad.reshape(-1), param.size, lr,
                   float(self.beta_2_decay), float(self.epsilon_1), float(self.epsilon_2),
                   float(self.clip_threshold), step, factored, weight_decay)

    def get_config(self):
        config = super().get_config()
        config.update({"beta_2_decay": self.beta_2_decay, "epsilon_1": self.epsilon_1,
                       "epsilon_2": self.epsilon_2, "clip_threshold": self.clip_threshold,
                       "relative_step": self.relative_step})
        return config
