"""Learning-rate schedules: values against Keras's formulas written out here, config round trips,
and (where keras is installed) the same values and config keys as Keras 3."""

import importlib.util
import math
import os

import pytest

from fkeras.optimizers import schedules

CASES = [
    ("ExponentialDecay", dict(initial_learning_rate=0.1, decay_steps=3, decay_rate=0.5,
                              staircase=True),
     lambda s: 0.1 * 0.5 ** math.floor(s / 3)),
    ("PiecewiseConstantDecay", dict(boundaries=[2, 5], values=[1.0, 0.5, 0.1]),
     lambda s: 1.0 if s <= 2 else (0.5 if s <= 5 else 0.1)),
    ("PolynomialDecay", dict(initial_learning_rate=0.1, decay_steps=4, end_learning_rate=0.01,
                             power=2.0),
     lambda s: (0.1 - 0.01) * (1 - min(s, 4) / 4) ** 2 + 0.01),
    ("InverseTimeDecay", dict(initial_learning_rate=0.1, decay_steps=2, decay_rate=0.5),
     lambda s: 0.1 / (1 + 0.5 * s / 2)),
    ("CosineDecay", dict(initial_learning_rate=0.1, decay_steps=5, alpha=0.1),
     lambda s: 0.1 * (0.9 * 0.5 * (1 + math.cos(math.pi * min(s, 5) / 5)) + 0.1)),
    ("CosineDecayRestarts", dict(initial_learning_rate=0.1, first_decay_steps=3, t_mul=1.0,
                                 m_mul=0.5),
     lambda s: 0.1 * 0.5 ** (s // 3) * 0.5 * (1 + math.cos(math.pi * (s % 3) / 3))),
]


@pytest.mark.parametrize("name,kwargs,formula", CASES, ids=[c[0] for c in CASES])
def test_values_and_round_trip(name, kwargs, formula):
    sched = getattr(schedules, name)(**kwargs)
    for step in range(9):
        assert sched(step) == pytest.approx(formula(step), rel=1e-12)
    config = sched.get_config()
    revived = schedules.deserialize(schedules.serialize(sched))
    assert revived.get_config() == config
    assert [revived(s) for s in range(9)] == [sched(s) for s in range(9)]


@pytest.mark.parametrize("name,arg", [("ExponentialDecay", "decay_steps"),
                                      ("CosineDecayRestarts", "first_decay_steps")])
def test_non_positive_steps_raise(name, arg):
    kwargs = dict(initial_learning_rate=0.1, **{arg: 0})
    if name == "ExponentialDecay":
        kwargs["decay_rate"] = 0.5
    with pytest.raises(ValueError, match=f"Argument `{arg}` must be > 0"):
        getattr(schedules, name)(**kwargs)


@pytest.mark.skipif(importlib.util.find_spec("keras") is None
                    or importlib.util.find_spec("torch") is None, reason="needs keras + torch")
@pytest.mark.parametrize("name,kwargs,formula", CASES, ids=[c[0] for c in CASES])
def test_same_as_keras(name, kwargs, formula):
    os.environ.setdefault("KERAS_BACKEND", "torch")
    import keras

    ours = getattr(schedules, name)(**kwargs)
    theirs = getattr(keras.optimizers.schedules, name)(**kwargs)
    assert set(ours.get_config()) == set(theirs.get_config())
    for step in range(9):
        assert ours(step) == pytest.approx(float(keras.ops.convert_to_numpy(theirs(step))),
                                           rel=1e-6)
