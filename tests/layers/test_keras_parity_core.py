"""Parity with real Keras 3 for the core, activation, reshaping and merging layers (skipped
without keras): the same weights give the same outputs to 1e-5 (inference and training mode),
weighted layers (Dense, PReLU) have the same weights after one SGD step, and the config keys
are Keras's."""

import numpy as np
import pytest
from keras_parity import ATOL, RTOL, flat, keras, randn, to_np

import fkeras
from fkeras import layers

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")


def _compare(name, kwargs, inputs, weights=None, **call_kwargs):
    """Builds both layers, gives fkeras Keras's weights (or `weights` to both), and compares
    outputs in inference and training mode; returns the two layers."""
    k_layer = getattr(keras.layers, name)(**kwargs)
    f_layer = getattr(layers, name)(**kwargs)
    k_out = flat(k_layer(inputs, **call_kwargs))
    if k_layer.weights:
        shapes = [np.shape(x) for x in inputs] if isinstance(inputs, list) else np.shape(inputs)
        f_layer.build(shapes)
        if weights is not None:
            k_layer.set_weights(weights)
            k_out = flat(k_layer(inputs, **call_kwargs))
        f_layer.set_weights(k_layer.get_weights())
    for training in (False, True):
        f_out = flat(f_layer(inputs, **call_kwargs))
        if training:
            k_out = flat(k_layer(inputs, training=True, **call_kwargs))
        assert len(k_out) == len(f_out)
        for k, f in zip(k_out, f_out):
            assert tuple(np.shape(f)) == tuple(to_np(k).shape)
            np.testing.assert_allclose(np.asarray(f), to_np(k), rtol=RTOL, atol=ATOL)
    _compare_config_keys(k_layer, f_layer)
    return k_layer, f_layer


def _compare_config_keys(k_layer, f_layer):
    k_keys, f_keys = set(k_layer.get_config()), set(f_layer.get_config())
    # Keras 3 omits activity_regularizer when it is None; fkeras always writes it.
    missing = k_keys - f_keys
    assert not missing, f"config keys Keras has and fkeras lacks: {missing}"
    extra = f_keys - k_keys - {"activity_regularizer"}
    assert not extra, f"config keys fkeras has and Keras lacks: {extra}"


def _sgd_step_parity(name, kwargs, x, lr=0.1, seed=7):
    """One SGD step on MSE in a one-layer model of each library, from the same weights."""
    k_in = keras.Input(batch_shape=x.shape)
    k_layer = getattr(keras.layers, name)(**kwargs)
    k_model = keras.Model(k_in, k_layer(k_in))
    f_in = fkeras.Input(batch_shape=x.shape)
    f_layer = getattr(layers, name)(**kwargs)
    f_model = fkeras.Model(f_in, f_layer(f_in))
    rng = np.random.default_rng(seed)
    k_layer.set_weights([rng.standard_normal(w.shape).astype(np.float32) * 0.5
                         for w in k_layer.get_weights()])
    f_layer.set_weights(k_layer.get_weights())
    y = randn(*k_model.output.shape, seed=seed + 1)
    k_model.compile(optimizer=keras.optimizers.SGD(learning_rate=lr), loss="mse")
    f_model.compile(optimizer=fkeras.optimizers.SGD(learning_rate=lr), loss="mse")
    k_loss = k_model.train_on_batch(x, y)
    f_loss = f_model.train_on_batch(x, y)
    np.testing.assert_allclose(np.ravel(f_loss)[0], np.ravel(k_loss)[0], rtol=1e-5)
    for kw, fw in zip(k_layer.get_weights(), f_layer.get_weights()):
        np.testing.assert_allclose(fw, kw, rtol=RTOL, atol=ATOL)


# ---- core ----

@pytest.mark.parametrize("kwargs,shape", [
    (dict(units=5, activation="tanh"), (3, 4)),
    (dict(units=5, activation="relu", use_bias=False), (3, 4)),
    (dict(units=3, activation="softmax"), (2, 3, 4)),
    (dict(units=2, activation="gelu"), (2, 3, 2, 4)),
    (dict(units=4, activation="leaky_relu"), (3, 4)),
    (dict(units=4, lora_rank=2), (3, 4)),
])
def test_dense(kwargs, shape):
    x = randn(*shape)
    if "lora_rank" in kwargs:  # a non-zero B so the low-rank update shows in the output
        k = keras.layers.Dense(**kwargs)
        k.build(shape)
        ws = [randn(*w.shape, seed=i + 1) for i, w in enumerate(k.get_weights())]
        _compare("Dense", kwargs, x, weights=ws)
    else:
        _compare("Dense", kwargs, x)


@pytest.mark.parametrize("kwargs", [
    dict(units=3, activation="tanh"),
    dict(units=3, kernel_regularizer="l2", bias_regularizer="l1"),
    dict(units=3, activity_regularizer="l2", activation="sigmoid"),
    # Keras 3.15's build calls enable_lora(rank) and so resets lora_alpha to lora_rank (fkeras
    # keeps the given lora_alpha, see docs/layers.md): compare with the default alpha.
    dict(units=3, lora_rank=2),
])
def test_dense_sgd_step(kwargs):
    _sgd_step_parity("Dense", kwargs, randn(4, 5))


@pytest.mark.parametrize("kwargs,shape", [
    (dict(equation="abc,cde->abde", output_shape=(5, 4, 3), bias_axes="de", lora_rank=2),
     (2, 5, 6)),
    (dict(equation="ab,bc->ac", output_shape=4, lora_rank=3), (3, 6)),
])
def test_einsum_dense_lora(kwargs, shape):
    # LoRA on an N-D kernel: A (kernel.shape[:-1] + (rank,)), B (rank, kernel.shape[-1]);
    # non-zero B so the update shows, then one SGD step trains A and B, not the kernel.
    x = randn(*shape)
    k = keras.layers.EinsumDense(**kwargs)
    k.build(shape)
    ws = [randn(*w.shape, seed=i + 1) for i, w in enumerate(k.get_weights())]
    _compare("EinsumDense", kwargs, x, weights=ws)
    _sgd_step_parity("EinsumDense", kwargs, x)


@pytest.mark.parametrize("activation", ["relu", "sigmoid", "softmax", "elu", "swish", "gelu"])
def test_activation(activation):
    _compare("Activation", dict(activation=activation), randn(3, 4, 5))


@pytest.mark.parametrize("kwargs", [dict(), dict(max_value=1.0), dict(negative_slope=0.2),
                                    dict(threshold=0.5), dict(max_value=6.0, threshold=0.3,
                                                              negative_slope=0.1)])
def test_relu(kwargs):
    _compare("ReLU", kwargs, randn(3, 4, 5) * 3)


@pytest.mark.parametrize("name,kwargs", [("LeakyReLU", {}), ("LeakyReLU", {"negative_slope": 0.05}),
                                         ("ELU", {}), ("ELU", {"alpha": 0.3})])
def test_simple_activation_layers(name, kwargs):
    _compare(name, kwargs, randn(3, 4, 5))


@pytest.mark.parametrize("axis", [-1, 1, [1, 2]])
def test_softmax(axis):
    _compare("Softmax", dict(axis=axis), randn(2, 3, 4))


def test_softmax_mask():
    mask = np.random.default_rng(0).random((2, 3, 4)) > 0.3
    _compare("Softmax", {}, randn(2, 3, 4), mask=mask)
    _compare("Softmax", {}, randn(2, 3, 4), mask=np.array([[1, 0, 1, 1]], np.float32))


@pytest.mark.parametrize("kwargs", [dict(), dict(shared_axes=[1]), dict(shared_axes=[1, 2]),
                                    dict(alpha_regularizer="l2")])
def test_prelu(kwargs):
    _compare("PReLU", kwargs, randn(2, 3, 4, 5))
    _sgd_step_parity("PReLU", kwargs, randn(2, 3, 4, 5))


# ---- reshaping ----

@pytest.mark.parametrize("name,kwargs,shape", [
    ("Reshape", dict(target_shape=(4, -1)), (2, 3, 8)),
    ("Reshape", dict(target_shape=(24,)), (2, 3, 8)),
    ("Flatten", dict(), (2, 3, 4, 5)),
    ("Flatten", dict(data_format="channels_first"), (2, 3, 4, 5)),
    ("Permute", dict(dims=(3, 1, 2)), (2, 3, 4, 5)),
    ("RepeatVector", dict(n=3), (2, 5)),
])
def test_reshaping(name, kwargs, shape):
    _compare(name, kwargs, randn(*shape))


def test_reshape_symbolic_shapes_match():
    for target, shape in [((-1, 3), (None, 6)), ((-1, 3), (32, 28, 3)), ((2, -1), (4, 6))]:
        k = keras.layers.Reshape(target)(keras.Input(shape=shape)).shape
        f = layers.Reshape(target)(fkeras.Input(shape=shape)).shape
        assert tuple(k) == tuple(f)


# ---- merging ----

@pytest.mark.parametrize("name", ["Add", "Subtract", "Multiply", "Average", "Maximum",
                                  "Minimum"])
@pytest.mark.parametrize("shapes", [[(2, 3, 4), (2, 3, 4)], [(2, 3, 1), (2, 3, 4)],
                                    [(2, 4), (2, 3, 4)]])
def test_elementwise_merges(name, shapes):
    _compare(name, {}, [randn(*s, seed=i) for i, s in enumerate(shapes)])


@pytest.mark.parametrize("name", ["Add", "Multiply", "Average", "Maximum", "Minimum"])
def test_merges_of_three(name):
    _compare(name, {}, [randn(2, 5, seed=i) for i in range(3)])


@pytest.mark.parametrize("axis,shapes", [(-1, [(2, 3, 4), (2, 3, 2)]),
                                         (1, [(2, 3, 4), (2, 1, 4), (2, 2, 4)])])
def test_concatenate(axis, shapes):
    _compare("Concatenate", dict(axis=axis), [randn(*s, seed=i) for i, s in enumerate(shapes)])


@pytest.mark.parametrize("axes,shapes", [(1, [(2, 5), (2, 5)]), (-1, [(2, 5), (2, 5)]),
                                         ((2, 1), [(2, 3, 4), (2, 4, 5)]),
                                         (1, [(2, 3, 4), (2, 3, 5)]),
                                         ([1, 1], [(2, 4), (2, 4, 6)]),
                                         ([-1, -1], [(2, 3, 4), (2, 4)]),
                                         ((2, 1), [(2, 3, 4, 2), (2, 4, 5)])])
@pytest.mark.parametrize("normalize", [False, True])
def test_dot(axes, shapes, normalize):
    _compare("Dot", dict(axes=axes, normalize=normalize),
             [randn(*s, seed=i) for i, s in enumerate(shapes)])


def test_merge_error_texts_match_keras():
    cases = [
        ("Add", {}, [(4, 5), (4, 6)]),
        ("Concatenate", {}, [(4, 5), (3, 6)]),
        ("Subtract", {}, [(3,), (3,), (3,)]),
        ("Dot", {"axes": 1}, [(3,), (4,)]),
    ]
    for name, kwargs, shapes in cases:
        with pytest.raises(ValueError) as k_info:
            getattr(keras.layers, name)(**kwargs)([keras.Input(shape=s) for s in shapes])
        with pytest.raises(ValueError) as f_info:
            getattr(layers, name)(**kwargs)([fkeras.Input(shape=s) for s in shapes])
        assert str(f_info.value) == str(k_info.value)


def test_functional_forms_exist_and_agree():
    xs = [randn(2, 4, seed=i) for i in range(2)]
    for fn in ["add", "subtract", "multiply", "average", "maximum", "minimum", "concatenate"]:
        np.testing.assert_allclose(getattr(layers, fn)(xs), to_np(getattr(keras.layers, fn)(xs)),
                                   rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(layers.dot(xs, axes=1), to_np(keras.layers.dot(xs, axes=1)),
                               rtol=RTOL, atol=ATOL)
