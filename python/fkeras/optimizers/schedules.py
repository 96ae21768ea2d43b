"""Learning-rate schedules (keras.optimizers.schedules), Keras 3 formulas.

A schedule maps the optimizer's step count (`optimizer.iterations` before the update, so the
first update uses schedule(0)) to a learning rate. Values are plain Python floats.
"""

import math


class LearningRateSchedule:
    """Base class: subclasses implement `__call__(step)` and `get_config()`."""

    def __call__(self, step):
        raise NotImplementedError(
            f"Learning rate schedule '{type(self).__name__}' must override `__call__(self, step)`."
        )

    # Subclasses list their constructor arguments here; get_config reads the attributes of the
    # same names. A subclass that is not serializable this way overrides get_config.
    _CONFIG = None

    def get_config(self):
        if self._CONFIG is None:
            raise NotImplementedError(
                f"Learning rate schedule '{type(self).__name__}' must override `get_config()` "
                "in order to be serializable."
            )
        return {k: getattr(self, k) for k in self._CONFIG}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _check_positive(name, value):
    if value <= 0:
        raise ValueError(f"Argument `{name}` must be > 0. Received: {name}={value}")


class _StepDecay(LearningRateSchedule):
    """Shared by ExponentialDecay and InverseTimeDecay: progress p = step / decay_steps
    (floored if staircase) fed to `_rate(p)`."""

    _CONFIG = ("initial_learning_rate", "decay_steps", "decay_rate", "staircase", "name")
    _check_steps = True

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False,
                 name=None):
        if self._check_steps:
            _check_positive("decay_steps", decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name or type(self).__name__

    def __call__(self, step):
        p = float(step) / self.decay_steps
        return self._rate(math.floor(p) if self.staircase else p)


class ExponentialDecay(_StepDecay):
    """initial_learning_rate * decay_rate ** (step / decay_steps) (floored if staircase)."""

    def _rate(self, p):
        return self.initial_learning_rate * self.decay_rate ** p


class PiecewiseConstantDecay(LearningRateSchedule):
    """values[0] while step <= boundaries[0], values[i] while step <= boundaries[i], ..."""

    _CONFIG = ("boundaries", "values", "name")

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        if len(boundaries) != len(values) - 1:
            raise ValueError(
                "The length of boundaries should be 1 less than the length of values. "
                f"Received: boundaries={boundaries} of length {len(boundaries)}, and "
                f"values={values} of length {len(values)}."
            )
        self.boundaries = list(boundaries)
        self.values = list(values)
        self.name = name

    def __call__(self, step):
        for b, v in zip(self.boundaries, self.values):
            if step <= b:
                return v
        return self.values[-1]


class PolynomialDecay(LearningRateSchedule):
    """(initial - end) * (1 - step / decay_steps) ** power + end, step capped (or cycled)."""

    _CONFIG = ("initial_learning_rate", "decay_steps", "end_learning_rate", "power",
               "cycle", "name")

    def __init__(self, initial_learning_rate, decay_steps, end_learning_rate=0.0001, power=1.0,
                 cycle=False, name="PolynomialDecay"):
        _check_positive("decay_steps", decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.end_learning_rate = end_learning_rate
        self.power = power
        self.cycle = cycle
        self.name = name

    def __call__(self, step):
        step = float(step)
        decay_steps = float(self.decay_steps)
        if self.cycle:
            decay_steps *= 1.0 if step == 0 else math.ceil(step / self.decay_steps)
        else:
            step = min(step, decay_steps)
        p = step / decay_steps
        return ((self.initial_learning_rate - self.end_learning_rate) * (1 - p) ** self.power
                + self.end_learning_rate)


class InverseTimeDecay(_StepDecay):
    """initial_learning_rate / (1 + decay_rate * step / decay_steps) (floored if staircase)."""

    _check_steps = False  # Keras does not check it here either

    def _rate(self, p):
        return self.initial_learning_rate / (1.0 + self.decay_rate * p)


class CosineDecay(LearningRateSchedule):
    """Optional linear warmup from initial_learning_rate to warmup_target over warmup_steps,
    then cosine decay to alpha * (warmup_target or initial_learning_rate) over decay_steps."""

    _CONFIG = ("initial_learning_rate", "decay_steps", "alpha", "name", "warmup_target",
               "warmup_steps")

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name="CosineDecay",
                 warmup_target=None, warmup_steps=0):
        _check_positive("decay_steps", decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.alpha = alpha
        self.name = name
        self.warmup_target = warmup_target
        self.warmup_steps = warmup_steps

    def _decay(self, step, decay_from):
        cosine = 0.5 * (1.0 + math.cos(math.pi * step / self.decay_steps))
        return decay_from * ((1 - self.alpha) * cosine + self.alpha)

    def __call__(self, step):
        step = float(step)
        if self.warmup_target is None:
            return self._decay(min(step, self.decay_steps), self.initial_learning_rate)
        step = min(step, self.decay_steps + self.warmup_steps)
        if step < self.warmup_steps:
            completed = step / self.warmup_steps
            return self.initial_learning_rate + completed * (
                self.warmup_target - self.initial_learning_rate)
        return self._decay(step - self.warmup_steps, self.warmup_target)


class CosineDecayRestarts(LearningRateSchedule):
    """SGDR: cosine decay with warm restarts, periods growing by t_mul, peaks scaled by m_mul."""

    _CONFIG = ("initial_learning_rate", "first_decay_steps", "t_mul", "m_mul", "alpha",
               "name")

    def __init__(self, initial_learning_rate, first_decay_steps, t_mul=2.0, m_mul=1.0,
                 alpha=0.0, name="SGDRDecay"):
        _check_positive("first_decay_steps", first_decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.first_decay_steps = first_decay_steps
        self.t_mul = t_mul
        self.m_mul = m_mul
        self.alpha = alpha
        self.name = name

    def __call__(self, step):
        fraction = float(step) / self.first_decay_steps
        if self.t_mul == 1.0:
            restart = math.floor(fraction)
            fraction -= restart
        else:
            restart = math.floor(math.log(1.0 - fraction * (1.0 - self.t_mul))
                                 / math.log(self.t_mul))
            done = (1.0 - self.t_mul ** restart) / (1.0 - self.t_mul)
            fraction = (fraction - done) / self.t_mul ** restart
        cosine = 0.5 * self.m_mul ** restart * (1.0 + math.cos(math.pi * fraction))
        return self.initial_learning_rate * ((1 - self.alpha) * cosine + self.alpha)



CLASSES = {c.__name__: c for c in (ExponentialDecay, PiecewiseConstantDecay, PolynomialDecay,
                                    InverseTimeDecay, CosineDecay, CosineDecayRestarts)}


def serialize(schedule):
    return {"module": "keras.optimizers.schedules", "class_name": type(schedule).__name__,
            "config": schedule.get_config(), "registered_name": None}


def deserialize(config, custom_objects=None):
    name = config["class_name"]
    cls = _custom(config, custom_objects) or CLASSES.get(name)
    if cls is None:
        raise ValueError(f"Unknown learning rate schedule: '{name}'.")
    return cls.from_config(dict(config["config"]))


def _custom(config, custom_objects):
    """A custom or registered class for a config entry (None when it names a built-in)."""
    from fkeras.saving.object_registration import find_custom

    return find_custom(custom_objects, config.get("registered_name"), config.get("class_name"))
