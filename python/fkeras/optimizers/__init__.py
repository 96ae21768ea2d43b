"""fkeras.optimizers: Keras 3 optimizers over packed flat buffers and fused update kernels."""

from fkeras.optimizers import schedules
from fkeras.optimizers import legacy
from fkeras.optimizers.adadelta import Adadelta
from fkeras.optimizers.adafactor import Adafactor
from fkeras.optimizers.adagrad import Adagrad
from fkeras.optimizers.adam import Adam
from fkeras.optimizers.adamax import Adamax
from fkeras.optimizers.adamw import AdamW
from fkeras.optimizers.ftrl import Ftrl
from fkeras.optimizers.lamb import Lamb
from fkeras.optimizers.lion import Lion
from fkeras.optimizers.loss_scale_optimizer import LossScaleOptimizer
from fkeras.optimizers.multi_optimizer import MultiOptimizer, OptimizerMap
from fkeras.optimizers.muon import Muon
from fkeras.optimizers.nadam import Nadam
from fkeras.optimizers.optimizer import Optimizer
from fkeras.optimizers.rmsprop import RMSprop
from fkeras.optimizers.schedule_free_adamw import ScheduleFreeAdamW
from fkeras.optimizers.sgd import SGD

CLASSES = {c.__name__: c for c in (SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, Nadam,
                                   Lion, Lamb, Ftrl, Adafactor, Muon, ScheduleFreeAdamW)}
# Wrappers of another optimizer: resolvable from a config, not constructible from a bare name.
WRAPPERS = {"LossScaleOptimizer": LossScaleOptimizer, "MultiOptimizer": MultiOptimizer}
ALIASES = {name.lower(): cls for name, cls in CLASSES.items()}


def get(identifier):
    """Resolves an optimizer: an instance, a name ('adam', 'SGD'), or a config dict."""
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, str):
        cls = CLASSES.get(identifier) or ALIASES.get(identifier.lower())
        if cls is None:
            raise ValueError(f"Could not interpret optimizer identifier: {identifier}")
        return cls()
    if isinstance(identifier, dict):
        return deserialize(identifier)
    raise ValueError(f"Could not interpret optimizer identifier: {identifier!r}")


def serialize(optimizer):
    return {"module": "keras.optimizers", "class_name": type(optimizer).__name__,
            "config": optimizer.get_config(), "registered_name": None}


def deserialize(config, custom_objects=None):
    name = config["class_name"]
    cls = (_custom(config, custom_objects) or CLASSES.get(name) or WRAPPERS.get(name)
           or ALIASES.get(name.lower()))
    if cls is None:
        raise ValueError(f"Unknown optimizer: '{name}'.")
    return cls.from_config(dict(config.get("config") or {}), custom_objects)


__all__ = ["Optimizer", "get", "serialize", "deserialize", "schedules", "legacy",
           "LossScaleOptimizer", "MultiOptimizer", "OptimizerMap", *sorted(CLASSES)]


def _custom(config, custom_objects):
    """A custom or registered class for a config entry (None when it names a built-in)."""
    from fkeras.saving.object_registration import find_custom

    return find_custom(custom_objects, config.get("registered_name"), config.get("class_name"))
