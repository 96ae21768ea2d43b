"""Model.to_json / models.model_from_json (Keras 3 layout, both directions with real Keras),
get_config / from_config round trips, models.clone_model."""

import json

import numpy as np
import pytest

import fkeras
from fkeras import layers, models

X = np.random.default_rng(0).standard_normal((5, 6)).astype(np.float32)


def _functional():
    inp = fkeras.Input((6,), name="inp")
    h = layers.Dense(4, activation="relu", name="hidden")(inp)
    skip = layers.Dense(4, name="skip")(inp)
    out = layers.Dense(2, activation="softmax", name="out")(layers.Add(name="add")([h, skip]))
    return fkeras.Model(inp, out, name="branchy")


def _sequential():
    return fkeras.Sequential([fkeras.Input((6,)), layers.Dense(5, activation="tanh"),
                              layers.Dropout(0.2), layers.Dense(1)], name="seq")


BUILDERS = {"functional": _functional, "sequential": _sequential}


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_to_json_round_trip(kind):
    model = BUILDERS[kind]()
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    text = model.to_json()
    config = json.loads(text)
    assert set(config) >= {"module", "class_name", "config", "registered_name", "build_config",
                           "compile_config"}
    assert config["class_name"] == ("Sequential" if kind == "sequential" else "Functional")
    assert config["config"]["layers"][1]["module"] == "keras.layers"
    clone = models.model_from_json(text)
    assert type(clone) is type(model) and clone.compiled
    assert [lyr.name for lyr in clone.layers] == [lyr.name for lyr in model.layers]
    clone.set_weights(model.get_weights())
    np.testing.assert_allclose(np.asarray(clone(X)), np.asarray(model(X)), rtol=1e-6)
    assert json.loads(model.to_json(indent=2)) == config


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_get_config_from_config_round_trip(kind):
    model = BUILDERS[kind]()
    config = model.get_config()
    again = type(model).from_config(config)
    assert again.get_config() == config
    again.set_weights(model.get_weights())
    np.testing.assert_allclose(np.asarray(again(X)), np.asarray(model(X)), rtol=1e-6)


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_json_interoperates_with_keras(kind):
    keras = pytest.importorskip("keras")
    model = BUILDERS[kind]()
    theirs = keras.models.model_from_json(model.to_json())
    theirs.set_weights(model.get_weights())
    np.testing.assert_allclose(keras.ops.convert_to_numpy(theirs(X)), np.asarray(model(X)),
                               rtol=1e-5, atol=1e-6)
    ours = models.model_from_json(theirs.to_json())
    ours.set_weights(model.get_weights())
    assert [lyr.name for lyr in ours.layers] == [lyr.name for lyr in theirs.layers]
    np.testing.assert_allclose(np.asarray(ours(X)), np.asarray(model(X)), rtol=1e-6)


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_clone_model_has_fresh_weights_and_the_same_graph(kind):
    model = BUILDERS[kind]()
    clone = models.clone_model(model)
    assert type(clone) is type(model)
    assert [type(lyr) for lyr in clone.layers] == [type(lyr) for lyr in model.layers]
    assert all(a is not b for a, b in zip(clone.layers, model.layers))
    assert any(not np.allclose(a, b) for a, b in zip(clone.get_weights(), model.get_weights()))
    clone.set_weights(model.get_weights())
    np.testing.assert_allclose(np.asarray(clone(X)), np.asarray(model(X)), rtol=1e-6)


def test_clone_function_and_call_function():
    model = _functional()

    def widen(layer):
        config = layer.get_config()
        if layer.name in ("hidden", "skip"):
            config["units"] = 7
        return layer.__class__.from_config(config)

    wide = models.clone_model(model, clone_function=widen)
    assert wide.get_layer("hidden").kernel.shape == (6, 7)
    shared = models.clone_model(model, clone_function=lambda layer: layer)
    np.testing.assert_allclose(np.asarray(shared(X)), np.asarray(model(X)), rtol=1e-6)
    assert shared.get_layer("out") is model.get_layer("out")
    seen = []

    def call(layer, *args, **kwargs):
        seen.append(layer.name)
        return layer(*args, **kwargs)

    models.clone_model(model, call_function=call)
    assert seen == ["hidden", "skip", "add", "out"]
    with pytest.raises(ValueError, match="must return a Layer"):
        models.clone_model(model, clone_function=lambda layer: None)


def test_clone_on_input_tensors_and_nested_models():
    model = _functional()
    new_in = fkeras.Input((6,), name="other_input")
    clone = models.clone_model(model, input_tensors=new_in)
    assert clone.inputs[0] is new_in
    seq = _sequential()
    inner = fkeras.Input((6,))
    outer = fkeras.Model(inner, layers.Dense(2)(seq(inner)))
    flat = models.clone_model(outer)
    assert flat.layers[1] is not seq
    deep = models.clone_model(outer, recursive=True)
    assert type(deep.layers[1]).__name__ == "Sequential" and deep.layers[1] is not seq
    with pytest.raises(ValueError, match="Functional or Sequential"):
        models.clone_model(layers.Dense(2))
