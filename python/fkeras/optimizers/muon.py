"""Muon (Keras 3.15). 2-D variables (not embeddings, not matching `exclude_layers`): momentum
(muon_momentum_update), Newton-Schulz orthogonalization on the GEMM kernel, then
muon_update (weight decay `weight_decay`, step lr * sqrt(max(rows, cols)) * rms_rate).
Other variables: AdamW (adam_update) at lr * adam_lr_ratio with `adam_weight_decay`.
State, as Keras: per variable momentum, then velocity for the AdamW variables only.
"""

import re

import numpy as np

from fkeras.optimizers.optimizer import Optimizer


class Muon(Optimizer):
    """Muon (momentum orthogonalized by Newton-Schulz), AdamW for the other variables.

    Args:
        learning_rate: Defaults to 0.001.
        adam_beta_1, adam_beta_2, epsilon: the AdamW part (0.9, 0.999, 1e-7).
        adam_weight_decay: AdamW variables' decay (0.004). weight_decay: Muon's (0.004).
        exclude_layers: regexes of variable paths that use AdamW.
        exclude_embeddings: paths containing "embedding" use AdamW (True).
        muon_a, muon_b, muon_c: Newton-Schulz coefficients. ns_steps: iterations (5).
        adam_lr_ratio: AdamW learning-rate multiplier (1). momentum: 0.95. nesterov: True.
        rms_rate: update scale factor (0.2; None: no scaling).
    """

    native_update = False  # NumPy between the kernel calls: a host twin on a GPU

    def __init__(self, learning_rate=0.001, adam_beta_1=0.9, adam_beta_2=0.999,
                 adam_weight_decay=0.004, epsilon=1e-7, weight_decay=0.004, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, exclude_layers=None,
                 exclude_embeddings=True, muon_a=3.4445, muon_b=-4.7750, muon_c=2.0315,
                 adam_lr_ratio=1, momentum=0.95, ns_steps=5, nesterov=True, rms_rate=0.2,
                 **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, weight_decay=weight_decay,
                         clipnorm=clipnorm, clipvalue=clipvalue,
                         global_clipnorm=global_clipnorm, use_ema=use_ema,
                         ema_momentum=ema_momentum,
                         ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor,
                         gradient_accumulation_steps=gradient_accumulation_steps, **kwargs)
        self.adam_beta_1 = adam_beta_1
        self.adam_beta_2 = adam_beta_2
        self.epsilon = epsilon
        self.muon_a, self.muon_b, self.muon_c = muon_a, muon_b, muon_c
        self.adam_lr_ratio = adam_lr_ratio
        self.momentum = momentum
        self.ns_steps = ns_steps
        self.nesterov = nesterov
        self.exclude_embeddings = exclude_embeddings
        self.exclude_layers = exclude_layers or []
        self.adam_weight_decay = adam_weight_decay
        self.rms_rate = rms_rate

    def _should_use_adamw(self, variable):
        if len(variable.shape) != 2:
            return True
        path = getattr(variable, "path", variable.name) or ""
        if self.exclude_embeddings and "embedding" in path.lower():
            return True
        return any(re.search(k, path) for k in self.exclude_layers)

    def _slot_calls(self):
        return [("momentum", "velocity")]

    def build(self, variables):
        if self.built:
            return
        super().build(variables)
        self._per_variable = False

    @property
    def variables(self):
        out = super().variables
        if not self.built:
            return out
        muon_names = {f"velocity/{v.name}" for v in self._trainable_variables
                      if not self._should_use_adamw(v)}
        return [v for v in out if v.name not in muon_names]

    def _update(self, g, lr, step, weight_decay):
        k = g.dev.kernels
        for i, var in enumerate(g.variables):
            param, grad, m = g.view(g.param, i), g.view(g.grad, i), g.view(g.slots["momentum"], i)
            decay = self._use_weight_decay(var)
            n = param.size
            if self._should_use_adamw(var):
                wd = self.adam_weight_decay if decay else None
                if wd is not None:
                    param -= param * np.float32(wd) * np.float32(lr)
                k["adam_update"](param.reshape(-1), m.reshape(-1),
                                 g.view(g.slots["velocity"], i).reshape(-1), None,
                                 grad.reshape(-1), n, lr * self.adam_lr_ratio,
                                 float(self.adam_beta_1), float(self.adam_beta_2),
                                 float(self.epsilon), step, 0.0)
                continue
            wd = self.weight_decay if decay and self.weight_decay is not None else 0.0
            x = g.dev.empty(var.shape)
            k["muon_momentum_update"](m.reshape(-1), x.reshape(-1), grad.reshape(-1), n,
                                      float(self.momentum), bool(self.nesterov))
            ortho = self._newton_schulz(g.dev, x)
            rows, cols = var.shape
            scale = 1.0 if self.rms_rate is None else \
                float(np.sqrt(np.float32(max(rows, cols)))) * self.rms_rate
            k["muon_update"](param.reshape(-1), ortho.reshape(-1), n, lr, scale, float(wd))

    def _newton_schulz(self, dev, x):
        """Keras's quintic Newton-Schulz iteration, every product on the GEMM kernel."""
        gemm = dev.kernels["gemm"]
        tall = x.shape[0] > x.shape[1]
        if tall:
            x = np.ascontiguousarray(x.T)
        x = (x / (np.float32(np.linalg.norm(x.astype(np.float64))) + np.float32(1e-7))
             ).astype(dev.dtype)
        rows, cols = x.shape
        a_, b_, c_ = (np.float32(v) for v in (self.muon_a, self.muon_b, self.muon_c))
        for _ in range(self.ns_steps):
            ta = dev.empty((rows, rows))
            gemm(ta, x, x, rows, rows, cols, False, True, 1.0, 0.0)
            tb = dev.empty((rows, rows))
            gemm(tb, np.ascontiguousarray(c_ * ta), ta, rows, rows, rows, False, False, 1.0,
                 0.0)
            tb += b_ * ta
            nx = dev.empty((rows, cols))
            gemm(nx, tb, x, rows, cols, rows, False, False, 1.0, 0.0)
            x = a_ * x + nx
        return np.ascontiguousarray(x.T) if tall else x

    def get_config(self):
        config = super().get_config()
        config.update({
            "adam_beta_1": self.adam_beta_1, "adam_beta_2": self.adam_beta_2,
            "epsilon": self.epsilon, "exclude_layers": self.exclude_layers,
            "muon_a": self.muon_a, "muon_b": self.muon_b, "muon_c": self.muon_c,
            "adam_lr_ratio": self.adam_lr_ratio, "momentum": self.momentum,
            "ns_steps": self.ns_steps, "nesterov": self.nesterov,
            "exclude_embeddings": self.exclude_embeddings,
            "adam_weight_decay": self.adam_weight_decay, "rms_rate": self.rms_rate})
        return config
