"""MultiOptimizer and OptimizerMap (Keras 3.15): different optimizers for different variables.

OptimizerMap maps variable paths (exact keys first, then `re.fullmatch` patterns) to
optimizers, with a default. MultiOptimizer builds each inner optimizer on its own variables
and dispatches the gradients; its state is its own iterations and learning_rate, then each
inner optimizer's variables (Keras's order).
"""

import re
from collections.abc import MutableMapping

from fkeras.optimizers.loss_scale_optimizer import LossScaleOptimizer
from fkeras.optimizers.optimizer import Optimizer


def _serialize(obj):
    from fkeras import optimizers
    return optimizers.serialize(obj)


class OptimizerMap(MutableMapping):
    """Maps variable paths or regex patterns to optimizers.

    Args:
        default_optimizer: the optimizer of variables that no key matches.
        optimizer_map: optional dict of path or pattern -> optimizer.
    """

    def __init__(self, default_optimizer, optimizer_map=None):
        if not isinstance(default_optimizer, Optimizer):
            raise TypeError("default_optimizer must be a Keras Optimizer instance. "
                            f"Received: {default_optimizer}")
        if optimizer_map is not None and not isinstance(optimizer_map, dict):
            raise TypeError(f"optimizer_map must be a dictionary. Received: {optimizer_map}")
        self._default_optimizer = default_optimizer
        self._optimizer_map = {}
        for k, v in (optimizer_map or {}).items():
            self[k] = v

    @property
    def default_optimizer(self):
        return self._default_optimizer

    def __getitem__(self, key):
        if key in self._optimizer_map:
            return self._optimizer_map[key]
        matches = [p for p in self._optimizer_map if re.fullmatch(p, key)]
        if len(matches) > 1:
            raise ValueError(f"Multiple optimizers assigned to variable {key}.")
        return self._optimizer_map[matches[0]] if matches else self._default_optimizer

    def __setitem__(self, key, optimizer):
        if key in self._optimizer_map:
            raise ValueError(f"'{key}' already exists in the OptimizerMap with value "
                             f"{self._optimizer_map[key]}. Please make sure to not use "
                             "duplicated keys.")
        if not isinstance(key, str):
            raise ValueError(f"key must be a string. Received: {key}")
        if not isinstance(optimizer, Optimizer):
            raise ValueError(f"optimizer must be a Keras Optimizer instance. Received: "
                             f"{optimizer}")
        if isinstance(optimizer, LossScaleOptimizer):
            raise ValueError("optimizer cannot be LossScaleOptimizer.")
        if isinstance(optimizer, MultiOptimizer):
            raise ValueError("optimizer cannot be MultiOptimizer.")
        self._optimizer_map[key] = optimizer

    def __delitem__(self, key):
        del self._optimizer_map[key]

    def __len__(self):
        return len(self._optimizer_map)

    def __iter__(self):
        return iter(self._optimizer_map)

    def __call__(self, variable):
        return self[variable.path]

    def get_config(self):
        return {"default_optimizer": _serialize(self._default_optimizer),
                "optimizer_map": {k: _serialize(v) for k, v in self._optimizer_map.items()}}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from fkeras import optimizers
        default = optimizers.deserialize(config["default_optimizer"], custom_objects)
        mapping = {k: optimizers.deserialize(v, custom_objects)
                   for k, v in (config.get("optimizer_map") or {}).items()}
        return cls(default, mapping)


class MultiOptimizer(Optimizer):
    """Delegates each variable to the optimizer an OptimizerMap (or a callable) gives it.

    Args:
        optimizer_map: an OptimizerMap, or a callable variable -> optimizer.
        loss_scale_factor: set on every inner optimizer.
        name: optimizer name.
    """

    def __init__(self, optimizer_map, loss_scale_factor=None, name=None):
        self._inner_optimizers = []
        super().__init__(learning_rate=0.0, loss_scale_factor=loss_scale_factor, name=name)
        self._optimizer_map = optimizer_map
        for opt in list(getattr(optimizer_map, "values", lambda: [])()) + [
                getattr(optimizer_map, "default_optimizer", None)]:
            if opt is not None and opt not in self._inner_optimizers:
                opt.loss_scale_factor = loss_scale_factor
                self._inner_optimizers.append(opt)

    @property
    def loss_scale_factor(self):
        return getattr(self, "_loss_scale_factor", None)

    @loss_scale_factor.setter
    def loss_scale_factor(self, value):
        self._loss_scale_factor = value
        for opt in getattr(self, "_inner_optimizers", []):
            opt.loss_scale_factor = value

    def build(self, variables):
        if self.built:
            return
        variables = list(variables)
        groups = [[] for _ in self._inner_optimizers]
        self._var_to_idx = {}
        for var in variables:
            opt = self._optimizer_map(var)
            if not isinstance(opt, Optimizer):
                raise ValueError(f"Optimizer for variable {var} is not an Optimizer instance.")
            if isinstance(opt, LossScaleOptimizer):
                raise ValueError("LossScaleOptimizer cannot be used inside an MultiOptimizer.")
            if isinstance(opt, MultiOptimizer):
                raise ValueError("MultiOptimizer cannot be used inside an MultiOptimizer.")
            if opt not in self._inner_optimizers:
                opt.loss_scale_factor = self.loss_scale_factor
                self._inner_optimizers.append(opt)
                groups.append([])
            idx = self._inner_optimizers.index(opt)
            self._var_to_idx[id(var)] = idx
            groups[idx].append(var)
        for opt, vs in zip(self._inner_optimizers, groups):
            if vs:
                opt.build(vs)
        self._trainable_variables = variables
        self.built = True

    @property
    def optimizers(self):
        return self._inner_optimizers

    @property
    def variables(self):
        out = [self._iterations, self._lr_var]
        for opt in self._inner_optimizers:
            out.extend(opt.variables)
        return out

    @property
    def learning_rate(self):
        raise AttributeError("Learning rate cannot be accessed on a MultiOptimizer. Access the "
                             "learning rate on the individual sub-optimizers instead.")

    @learning_rate.setter
    def learning_rate(self, value):
        raise AttributeError("Learning rate cannot be set on a MultiOptimizer. Set the "
                             "learning rate on the individual sub-optimizers instead.")

    def apply(self, grads, trainable_variables=None):
        if len(grads) == 0:
            return
        if trainable_variables is None:
            if not self.built:
                raise ValueError("When passing `grads` without `variables`, the optimizer must "
                                 "already be built on a list of variables. Call "
                                 "`optimizer.build(trainable_variables)` first.")
            trainable_variables = self._trainable_variables
        if not self.built:
            self.build(trainable_variables)
        if len(grads) != len(self._var_to_idx):
            raise ValueError("Gradients must match trainable variables one-to-one. Received "
                             f"{len(grads)} gradients and {len(self._var_to_idx)} variables.")
        split = [[] for _ in self._inner_optimizers]
        for g, v in zip(grads, trainable_variables):
            split[self._var_to_idx[id(v)]].append((g, v))
        for opt, pairs in zip(self._inner_optimizers, split):
            if pairs:
                gs, vs = zip(*pairs)
                opt.apply(list(gs), list(vs))
        self._iterations._value += 1

    def finalize_variable_values(self, var_list=None):
        for opt in self._inner_optimizers:
            opt.finalize_variable_values()

    def get_config(self):
        m = self._optimizer_map
        return {"optimizer_map": m.get_config() and {
                    "module": "keras.optimizers", "class_name": "OptimizerMap",
                    "config": m.get_config(), "registered_name": None}
                if isinstance(m, OptimizerMap) else m,
                "loss_scale_factor": self.loss_scale_factor, "name": self.name}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        m = config["optimizer_map"]
        if isinstance(m, dict) and m.get("class_name") == "OptimizerMap":
            config["optimizer_map"] = OptimizerMap.from_config(m["config"], custom_objects)
        return cls(**config)
