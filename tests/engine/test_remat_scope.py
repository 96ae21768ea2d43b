"""fkeras.RematScope: the mode a layer is created in decides whether its eager calls under a
tape are rematerialized (Keras 3.15's rules, measured on real Keras below): the recomputation
is counted (calls of the layer's `call`, of its activation), values and gradients unchanged."""

import numpy as np
import pytest

import fkeras
from fkeras import layers, ops
from fkeras.engine.remat import RematMode, get_current_remat_mode

T = ops.convert_to_tensor

# (case, scope kwargs, layer name, expected calls of `call` in forward + backward)
CASES = [
    ("full", {"mode": "full"}, "d", 2),
    ("off", {"mode": None}, "d", 1),
    ("list_named", {"mode": "list_of_layers", "layer_names": ["d"]}, "d", 2),
    ("list_other", {"mode": "list_of_layers", "layer_names": ["zzz"]}, "d", 1),
    ("larger_than_below", {"mode": "larger_than", "output_size_threshold": 320}, "d", 1),
    ("larger_than_above", {"mode": "larger_than", "output_size_threshold": 319}, "d", 2),
    ("activations", {"mode": "activations"}, "d", 1),  # only the activation is recomputed
]


def _counting_dense(framework, name):
    calls = {"call": 0, "act": 0}

    def act(x):
        calls["act"] += 1
        return framework.activations.tanh(x)

    class CountingDense(framework.layers.Dense):
        def call(self, x):
            calls["call"] += 1
            return super().call(x)

    return CountingDense(40, activation=act, name=name), calls


def _run_fkeras(scope_kwargs, name, created_in=True, called_in=True):
    fkeras.utils.set_random_seed(0)
    scope = fkeras.RematScope(**scope_kwargs)
    if created_in:
        with scope:
            layer, calls = _counting_dense(fkeras, name)
    else:
        layer, calls = _counting_dense(fkeras, name)
    x = T(np.random.default_rng(0).standard_normal((8, 30)))
    layer(x[:1])
    calls.update(call=0, act=0)
    cot = np.random.default_rng(1).standard_normal((8, 40))
    with fkeras.GradientTape() as tape:
        tape.watch(x)
        if called_in:
            with scope:
                y = layer(x)
        else:
            y = layer(x)
    grads = tape.gradient(y, [x] + layer.trainable_weights, output_gradients=cot)
    return calls, np.asarray(y), [np.asarray(g) for g in grads]


@pytest.mark.parametrize("case,scope_kwargs,name,expected", CASES, ids=[c[0] for c in CASES])
def test_modes_recompute_as_keras(case, scope_kwargs, name, expected):
    calls, y, grads = _run_fkeras(scope_kwargs, name)
    assert calls["call"] == expected
    assert calls["act"] == (2 if case in ("activations",) or expected == 2 else 1)
    _, y0, grads0 = _run_fkeras({"mode": None}, name)
    np.testing.assert_allclose(y, y0, rtol=1e-6)
    for a, b in zip(grads0, grads):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_mode_is_taken_at_creation_not_at_call():
    assert _run_fkeras({"mode": "full"}, "d", created_in=True, called_in=False)[0]["call"] == 2
    assert _run_fkeras({"mode": "full"}, "d", created_in=False, called_in=True)[0]["call"] == 1


def test_builtin_activation_is_not_fused_in_activations_mode():
    """Dense(relu) normally fuses relu into the GEMM; in "activations" mode the activation is
    its own rematerialized call (a `remat` tape entry)."""
    with fkeras.RematScope(mode="activations"):
        layer = layers.Dense(4, activation="relu")
    x = T(np.random.default_rng(0).standard_normal((3, 5)))
    with fkeras.GradientTape() as tape:
        tape.watch(x)
        y = layer(x)
    names = [e[0].name for e in tape._entries]
    assert "remat" in names and len(names) == 2
    plain = layers.Dense(4, activation="relu")
    plain.build((None, 5))
    plain.set_weights(layer.get_weights())
    np.testing.assert_allclose(y, plain(x), rtol=1e-6)


def test_nested_scopes_and_current_mode():
    assert get_current_remat_mode() is None
    with fkeras.RematScope(mode="full"):
        assert get_current_remat_mode() == RematMode("full", 1024, [])
        with fkeras.RematScope(mode="larger_than", output_size_threshold=8):
            assert get_current_remat_mode() == RematMode("larger_than", 8, [])
            inner = layers.Dense(2)
        with fkeras.RematScope(mode=None):
            off = layers.Dense(2)
        outer = layers.Dense(2)
    assert get_current_remat_mode() is None
    assert inner._remat_mode.mode == "larger_than" and outer._remat_mode.mode == "full"
    assert off._remat_mode is None and layers.Dense(2)._remat_mode is None


def test_invalid_mode():
    with pytest.raises(ValueError, match="Invalid mode 'everything'"):
        fkeras.RematScope(mode="everything")


def test_model_created_in_scope_trains_with_recomputation():
    """`fit` (array mode) on a model created in a "larger_than" scope: the large layer is
    recomputed each step, the small one is not, and the weights equal a plain fit's."""
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((32, 8)), rng.standard_normal((32, 1))
    out = {}
    for remat in (False, True):
        fkeras.utils.set_random_seed(0)
        with fkeras.RematScope(mode="larger_than" if remat else None,
                               output_size_threshold=8 * 16):
            model = fkeras.Sequential([fkeras.Input((8,)), layers.Dense(64, activation="gelu"),
                                       layers.Dense(1)])
        counts = []
        for layer in model.layers:
            n = {"calls": 0}

            def call(x, _orig=layer.call, _n=n):
                _n["calls"] += 1
                return _orig(x)

            layer.call = call
            counts.append(n)
        model.compile("sgd", "mse")
        model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
        out[remat] = (model.get_weights(), [n["calls"] for n in counts])
    assert out[False][1] == [2, 2] and out[True][1] == [4, 2]
    for a, b in zip(out[False][0], out[True][0]):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_masked_recurrent_model_with_dropout_fits_as_without_remat():
    """Embedding(mask_zero) -> LSTM(dropout) -> Dense made in RematScope("full"): the masks
    pass through the rematerialized calls and the recurrent dropout masks repeat, so the fit
    equals the plain one exactly."""
    rng = np.random.default_rng(0)
    x = rng.integers(1, 10, (32, 7))
    x[:, 5:] = 0
    y = rng.standard_normal((32, 1)).astype("float32")
    out = []
    for mode in (None, "full"):
        fkeras.utils.set_random_seed(0)
        with fkeras.RematScope(mode=mode):
            model = fkeras.Sequential([
                fkeras.Input((7,), dtype="int32"), layers.Embedding(10, 4, mask_zero=True),
                layers.LSTM(5, dropout=0.2), layers.Dense(1)])
        model.compile("adam", "mse")
        fkeras.utils.set_random_seed(1)
        hist = model.fit(x, y, epochs=2, batch_size=8, shuffle=False, verbose=0)
        out.append((model.get_weights(), hist.history["loss"]))
    assert out[0][1] == out[1][1]
    for a, b in zip(out[0][0], out[1][0]):
        np.testing.assert_array_equal(a, b)


def _run_keras(keras, torch, scope_kwargs, name, created_in=True, called_in=True):
    scope = keras.RematScope(**scope_kwargs)
    if created_in:
        with scope:
            layer, calls = _counting_dense(keras, name)
    else:
        layer, calls = _counting_dense(keras, name)
    x = torch.tensor(np.random.default_rng(0).standard_normal((8, 30)), dtype=torch.float32,
                     requires_grad=True)
    layer(x[:1])
    calls.update(call=0, act=0)
    if called_in:
        with scope:
            y = layer(x)
    else:
        y = layer(x)
    y.sum().backward()
    return calls


@pytest.mark.parametrize("case,scope_kwargs,name,expected", CASES, ids=[c[0] for c in CASES])
def test_recomputation_counts_match_keras(case, scope_kwargs, name, expected):
    keras = pytest.importorskip("keras")
    torch = pytest.importorskip("torch")
    if keras.backend.backend() != "torch":
        pytest.skip("the counts are measured on Keras's torch backend")
    assert _run_keras(keras, torch, scope_kwargs, name) == _run_fkeras(scope_kwargs, name)[0]
    for created_in, called_in in ((True, False), (False, True)):
        assert _run_keras(keras, torch, scope_kwargs, name, created_in, called_in) == \
            _run_fkeras(scope_kwargs, name, created_in, called_in)[0]
