"""LossScaleOptimizer (Keras 3): dynamic loss scaling around an inner optimizer.

A step with any non-finite gradient is skipped and halves the scale; otherwise the gradients
are divided by the scale, the inner optimizer applies them, and after `dynamic_growth_steps`
finite steps in a row the scale doubles. State: iterations, learning_rate, step_counter,
dynamic_scale, then the inner optimizer's variables (Keras's order).
"""

import numpy as np

from fkeras.backend import devices as _devices
from fkeras.distribution import _state as _dist
from fkeras.optimizers.optimizer import Optimizer
from fkeras.optimizers.state import ScalarVariable

_BASE_DEFAULTS = {"weight_decay": None, "clipnorm": None, "global_clipnorm": None,
                  "clipvalue": None, "use_ema": False, "ema_momentum": 0.99,
                  "ema_overwrite_frequency": None, "loss_scale_factor": None,
                  "gradient_accumulation_steps": None}


class LossScaleOptimizer(Optimizer):
    """Dynamic loss scaling.

    Args:
        inner_optimizer: the optimizer that applies the unscaled gradients.
        initial_scale: the starting scale (2**15).
        dynamic_growth_steps: finite steps between doublings (2000).
    """

    def __init__(self, inner_optimizer, initial_scale=2.0 ** 15, dynamic_growth_steps=2000,
                 name=None, **kwargs):
        if not kwargs.pop("dynamic", True):
            raise ValueError("LossScaleOptimizer no longer supports `dynamic=False`. Instead, "
                             "simply set `loss_scale_factor` directly on the "
                             "`inner_optimizer`.")
        for arg, default in _BASE_DEFAULTS.items():
            if arg in kwargs and kwargs.pop(arg) != default:
                raise ValueError(f"LossScaleOptimizer does not support `{arg}`. Instead, set "
                                 f"`{arg}` on the `inner_optimizer`.")
        if kwargs:
            raise ValueError("LossScaleOptimizer does not support arguments: "
                             f"`{'`, `'.join(kwargs)}`.")
        if isinstance(inner_optimizer, dict):
            from fkeras import optimizers
            inner_optimizer = optimizers.deserialize(inner_optimizer)
        super().__init__(learning_rate=0.0, name=name)
        self.inner_optimizer = inner_optimizer
        self.initial_scale = initial_scale
        self.dynamic_growth_steps = dynamic_growth_steps
        self.inner_optimizer.loss_scale_factor = None
        self.step_counter = ScalarVariable(0, "step_counter", dtype=np.int64)
        self.dynamic_scale = ScalarVariable(initial_scale, "dynamic_scale", dtype=np.float32)

    def build(self, variables):
        if self.built:
            return
        self.inner_optimizer.build(variables)
        self._trainable_variables = list(variables)
        self.built = True

    @property
    def variables(self):
        own = [self._iterations, self._lr_var, self.step_counter, self.dynamic_scale]
        return own + list(self.inner_optimizer.variables)

    def apply(self, grads, trainable_variables=None):
        """Skips the step (halving the scale) on a non-finite gradient, else applies the
        unscaled gradients through the inner optimizer."""
        if not self.built:
            if trainable_variables is None:
                raise ValueError("When passing `grads` without `variables`, the optimizer "
                                 "must already be built on a list of variables.")
            self.build(trainable_variables)
        grads = [None if g is None else _devices.host_array(g) for g in grads]  # (NumPy checks)
        finite = all(bool(np.all(np.isfinite(g))) for g in grads if g is not None)
        if _dist.COMM is not None:  # DataParallel: every rank skips, or steps, together
            finite = all(_dist.COMM.allgather(finite))
        if not finite:
            self.step_counter.assign(0)
            self.dynamic_scale.assign(float(self.dynamic_scale) * 0.5)
            return
        scale = np.float32(self.dynamic_scale._value)
        unscaled = [None if g is None else np.asarray(g, np.float32) / scale for g in grads]
        self.inner_optimizer.apply(unscaled, trainable_variables)
        if int(self.step_counter) == self.dynamic_growth_steps - 1:
            self.step_counter.assign(0)
            self.dynamic_scale.assign(float(self.dynamic_scale) * 2.0)
        else:
            self.step_counter.assign(int(self.step_counter) + 1)

    def scale_loss(self, loss):
        """The loss times the current scale (the initial scale before building)."""
        return loss * (float(self.dynamic_scale) if self.built else self.initial_scale)

    def _fk_loss_factor(self):
        return float(self.dynamic_scale._value) if self.built else float(self.initial_scale)

    @property
    def learning_rate(self):
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        if hasattr(self, "inner_optimizer"):
            self.inner_optimizer.learning_rate = value

    def _set_learning_rate(self, value, initial=False):
        if initial:
            return super()._set_learning_rate(value, initial)
        self.inner_optimizer.learning_rate = value

    @property
    def iterations(self):
        return self.inner_optimizer.iterations

    def finalize_variable_values(self, var_list=None):
        self.inner_optimizer.finalize_variable_values(var_list)

    def get_config(self):
        from fkeras import optimizers
        return {"name": self.name, "inner_optimizer": optimizers.serialize(self.inner_optimizer),
                "initial_scale": self.initial_scale,
                "dynamic_growth_steps": self.dynamic_growth_steps}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from fkeras import optimizers
        config = dict(config)
        config["inner_optimizer"] = optimizers.deserialize(config["inner_optimizer"],
                                                           custom_objects)
        return cls(**config)
