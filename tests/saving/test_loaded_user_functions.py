"""A user's activation function resolved by name (a registered function, a model loaded from a
`.keras` file, a config dict) computes on Tensors inside fkeras's layers, so the tape sees it:
the layers below it still get gradients (it once ran on bare arrays in NumPy after loading,
which cut the gradient)."""

import numpy as np
import pytest

import fkeras as keras


@pytest.fixture(autouse=True)
def _own_registrations():
    """Removes what these tests register (other modules' registrations stay)."""
    yield
    table = keras.saving.get_custom_objects()
    for name in [n for n in table if n.startswith("test_pkg>")]:
        del table[name]


@pytest.fixture
def squared():
    @keras.saving.register_keras_serializable(package="test_pkg", name="squared")
    def squared(x):
        return x ** 2

    return squared


def _model(activation):
    inputs = keras.Input((4,))
    hidden = keras.layers.Dense(3, activation=activation, name="hidden")(inputs)
    model = keras.Model(inputs, keras.layers.Dense(1)(hidden))
    model.compile(optimizer="sgd", loss="mean_squared_error")
    return model


def _hidden_kernel_gradient(model):
    rng = np.random.default_rng(0)
    x, y = rng.random((8, 4)).astype("float32"), rng.random((8, 1)).astype("float32")
    with keras.GradientTape() as tape:
        loss = keras.ops.mean((model(x) - y) ** 2)
    return tape.gradient(loss, model.get_layer("hidden").kernel)


@pytest.mark.parametrize("how", ["name", "registered_name", "loaded_file", "config_dict"])
def test_user_activation_resolved_by_name_keeps_the_gradient(squared, tmp_path, how):
    if how == "name":
        model = _model("squared")
    elif how == "registered_name":
        model = _model("test_pkg>squared")
    elif how == "config_dict":
        model = _model(keras.activations.get(
            {"class_name": "function", "config": "squared", "module": None,
             "registered_name": "test_pkg>squared"}))
    else:
        path = str(tmp_path / "m.keras")
        _model(squared).save(path)
        model = keras.models.load_model(path)
    reference = _model(squared)
    reference.set_weights(model.get_weights())
    got, expected = _hidden_kernel_gradient(model), _hidden_kernel_gradient(reference)
    assert got is not None and np.any(got.numpy() != 0)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)
    assert keras.activations.serialize(model.get_layer("hidden").activation) == "squared"


def _register(lib):
    @lib.saving.register_keras_serializable(package="test_pkg", name="fn_reg")
    def fn_reg(w):
        return 0.1 * lib.ops.sum(w ** 2)

    @lib.saving.register_keras_serializable(package="test_pkg", name="fn_init")
    def fn_init(shape, dtype=None):
        return lib.ops.ones(shape, dtype=dtype) * 0.5

    @lib.saving.register_keras_serializable(package="test_pkg", name="fn_con")
    def fn_con(w):
        return lib.ops.clip(w, -0.3, 0.3)

    return fn_reg, fn_init, fn_con


def _function_model(lib):
    reg, init, con = _register(lib)
    inputs = lib.Input((4,))
    dense = lib.layers.Dense(2, kernel_regularizer=reg, kernel_initializer=init,
                             kernel_constraint=con, name="d")
    model = lib.Model(inputs, dense(inputs))
    model.compile(optimizer="sgd", loss="mse")
    return model


def _after_training(model):
    x, y = np.ones((4, 4), "float32"), np.zeros((4, 2), "float32")
    loss = float(model.evaluate(x, y, verbose=0))
    model.fit(x, y, verbose=0, epochs=3, shuffle=False)
    return loss, np.asarray(model.get_weights()[0])


@pytest.mark.parametrize("saver, loader", [("fkeras", "fkeras"), ("fkeras", "keras"),
                                           ("keras", "fkeras")])
def test_function_regularizer_initializer_constraint_round_trip(tmp_path, saver, loader):
    libs = {"fkeras": keras}
    if "keras" in (saver, loader):
        libs["keras"] = pytest.importorskip("keras")
    model = _function_model(libs[saver])
    config = model.get_layer("d").get_config()["kernel_regularizer"]
    assert config == {"module": "builtins", "class_name": "function",
                      "config": "test_pkg>fn_reg", "registered_name": "function"}
    path = str(tmp_path / "m.keras")
    model.save(path)
    if loader != saver:
        _register(libs[loader])
    loaded = libs[loader].models.load_model(path)
    expected = _after_training(_function_model(keras))
    got = _after_training(loaded)
    assert got[0] == pytest.approx(expected[0], rel=1e-6)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-5)
