"""utils.Config, utils.legacy and the interactive-logging aliases, against real Keras."""

import json

import numpy as np
import pytest

import fkeras
from fkeras.utils import Config


def _exercise(cls):
    """The observable behaviour of a Config class as a list of results."""
    out = []
    c = cls(learning_rate=0.1, momentum=0.9)
    c.use_ema = True
    c["seed"] = 123
    out += [c.learning_rate, c["use_ema"], c.seed, len(c), list(c), "seed" in c,
            c.get("nope", 5), c.as_dict(), json.loads(c.to_json())]
    out.append(c.pop("momentum"))
    c.update(extra=1)
    out.append(sorted(c.keys()))
    del c["extra"]
    c.freeze()
    out.append(c.frozen)
    for action in (lambda: setattr(c, "x", 1), lambda: c.__setitem__("x", 1),
                   lambda: c.pop("seed"), lambda: c.update(x=1),
                   lambda: c.__delitem__("seed")):
        with pytest.raises(ValueError, match="frozen"):
            action()
    c.unfreeze()
    c.x = 2
    out.append(c.as_dict())
    with pytest.raises(AttributeError, match="Did you mean 'seed'"):
        c.sed  # noqa: B018
    return out


def test_config_behaviour():
    out = _exercise(Config)
    assert out[0] == 0.1 and out[2] == 123 and out[4] == ["learning_rate", "momentum", "seed",
                                                         "use_ema"]
    assert out[-1] == {"learning_rate": 0.1, "use_ema": True, "seed": 123, "x": 2}


def test_config_matches_keras():
    keras = pytest.importorskip("keras")
    assert _exercise(Config) == _exercise(keras.utils.Config)


def test_interactive_logging_aliases():
    assert fkeras.utils.is_interactive_logging_enabled is fkeras.config.is_interactive_logging_enabled
    fkeras.utils.disable_interactive_logging()
    try:
        assert not fkeras.config.is_interactive_logging_enabled()
    finally:
        fkeras.utils.enable_interactive_logging()
    assert fkeras.config.is_interactive_logging_enabled()


def test_legacy_round_trip():
    legacy = fkeras.utils.legacy
    init = fkeras.initializers.GlorotUniform(seed=1)
    data = legacy.serialize_keras_object(init)
    assert data == {"class_name": "GlorotUniform",
                    "config": {"seed": 1, "input_axes": None, "output_axes": None}}
    back = legacy.deserialize_keras_object(data, module_objects=vars(fkeras.initializers))
    assert isinstance(back, fkeras.initializers.GlorotUniform) and back.seed == 1
    assert legacy.serialize_keras_object(None) is None
    assert legacy.serialize_keras_object(fkeras.activations.relu) == "relu"
    dense = legacy.deserialize_keras_object({"class_name": "Dense", "config": {"units": 3}},
                                            module_objects={"Dense": fkeras.layers.Dense})
    assert dense.units == 3
    with pytest.raises(ValueError, match="Unknown layer: 'Nope'"):
        legacy.deserialize_keras_object({"class_name": "Nope", "config": {}},
                                        printable_module_name="layer")
    with pytest.raises(ValueError, match="Improper config format"):
        legacy.deserialize_keras_object({"config": {}})


def test_legacy_matches_keras():
    keras = pytest.importorskip("keras")
    for ours, theirs in ((fkeras.initializers.GlorotUniform(seed=1),
                          keras.initializers.GlorotUniform(seed=1)),
                         (fkeras.regularizers.L1L2(0.1, 0.2), keras.regularizers.L1L2(0.1, 0.2)),
                         (fkeras.constraints.MaxNorm(2.0), keras.constraints.MaxNorm(2.0))):
        assert fkeras.utils.legacy.serialize_keras_object(ours) == \
            keras.utils.legacy.serialize_keras_object(theirs)
    data = keras.utils.legacy.serialize_keras_object(keras.initializers.Orthogonal(gain=2.0))
    back = fkeras.utils.legacy.deserialize_keras_object(
        data, module_objects=vars(fkeras.initializers))
    assert back.gain == 2.0
    values = np.asarray(back((3, 3)))
    np.testing.assert_allclose(values.T @ values, 4 * np.eye(3), atol=1e-4)
