"""Parity of the convolution, pooling and spatial reshaping layers with real Keras 3 (skipped
without keras): same constructor arguments and weights (Keras's get_weights into fkeras's
set_weights) -> same outputs to 1e-5, the same weights after one SGD step for the layers with
weights, and the same get_config keys in the same order."""

import numpy as np
import pytest
from keras_parity import ATOL, RTOL, keras, randn, to_np

import fkeras
from fkeras import layers

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")


def _first(a):
    return np.ascontiguousarray(np.moveaxis(a, -1, 1))


def _check(kind, kw, x, train=None, **call_kwargs):
    """Outputs equal; config keys equal; and for weighted layers one SGD step equal."""
    k_layer, f_layer = getattr(keras.layers, kind)(**kw), getattr(layers, kind)(**kw)
    k_out = to_np(k_layer(x, **call_kwargs))
    if k_layer.weights:
        f_layer.build(x.shape)
        assert [tuple(w.shape) for w in f_layer.weights] == \
            [tuple(w.shape) for w in k_layer.weights]
        f_layer.set_weights(k_layer.get_weights())
    np.testing.assert_allclose(np.asarray(f_layer(x, **call_kwargs)), k_out, rtol=RTOL,
                               atol=ATOL)
    assert list(f_layer.get_config()) == list(k_layer.get_config())
    if k_layer.weights and train is not False:
        _check_sgd_step(kind, kw, x, k_layer.get_weights())


def _check_sgd_step(kind, kw, x, weights):
    results = []
    for lib, opt_mod in ((keras, keras.optimizers), (fkeras, fkeras.optimizers)):
        inp = lib.Input(batch_shape=x.shape)
        layer = getattr(lib.layers, kind)(**kw)
        model = lib.Model(inp, layer(inp))
        layer.set_weights(weights)
        model.compile(optimizer=opt_mod.SGD(learning_rate=0.1), loss="mse")
        target = randn(*model.output.shape, seed=7) if lib is keras else target
        model.train_on_batch(x, target)
        results.append([np.asarray(w) for w in layer.get_weights()])
    for k, f in zip(*results):
        np.testing.assert_allclose(f, k, rtol=1e-4, atol=1e-5)


CONV1D = [dict(filters=4, kernel_size=3),
          dict(filters=4, kernel_size=3, strides=2, padding="same", activation="relu"),
          dict(filters=4, kernel_size=3, padding="causal", dilation_rate=2, groups=2),
          dict(filters=6, kernel_size=2, padding="causal", strides=2, activation="tanh"),
          dict(filters=4, kernel_size=3, padding="causal", data_format="channels_first")]


@pytest.mark.parametrize("kw", CONV1D)
def test_conv1d(kw):
    x = randn(2, 9, 4)
    _check("Conv1D", kw, _first(x) if kw.get("data_format") == "channels_first" else x)


@pytest.mark.parametrize("kw", [dict(groups=2, data_format="channels_first", strides=2,
                                     padding="same", use_bias=False),
                                dict(dilation_rate=(2, 1), activation="sigmoid")])
def test_conv2d_training(kw):
    x = randn(2, 7, 6, 4)
    _check("Conv2D", dict(filters=4, kernel_size=3, **kw),
           _first(x) if kw.get("data_format") == "channels_first" else x)


CONV3D = [dict(filters=3, kernel_size=2),
          dict(filters=4, kernel_size=(3, 2, 2), strides=(2, 1, 2), padding="same", groups=2),
          dict(filters=2, kernel_size=2, dilation_rate=(2, 1, 2), padding="same",
               data_format="channels_first", activation="relu")]


@pytest.mark.parametrize("kw", CONV3D)
def test_conv3d(kw):
    x = randn(2, 5, 4, 6, 2)
    _check("Conv3D", kw, _first(x) if kw.get("data_format") == "channels_first" else x)


# Kernel/stride/padding combinations where Keras's backends agree (Keras's torch backend warns
# and differs from TensorFlow/JAX when both its padding and output_padding are positive, e.g.
# an even kernel with "same"; fkeras follows TensorFlow/JAX there, see test_conv_nd_ops.py).
TRANSPOSE = [("Conv1DTranspose", dict(filters=3, kernel_size=3, strides=2)),
             ("Conv1DTranspose", dict(filters=3, kernel_size=3, strides=2, padding="same",
                                      data_format="channels_first")),
             ("Conv2DTranspose", dict(filters=3, kernel_size=3, strides=2, padding="same",
                                      activation="relu")),
             ("Conv2DTranspose", dict(filters=3, kernel_size=(3, 2), strides=(2, 2),
                                      output_padding=(1, 0))),
             ("Conv2DTranspose", dict(filters=2, kernel_size=3, dilation_rate=2,
                                      padding="same", data_format="channels_first")),
             ("Conv3DTranspose", dict(filters=2, kernel_size=(3, 2, 3), strides=(2, 1, 1))),
             ("Conv3DTranspose", dict(filters=2, kernel_size=3, strides=2, padding="same",
                                      output_padding=1))]


@pytest.mark.parametrize("kind,kw", TRANSPOSE)
def test_conv_transpose(kind, kw):
    rank = int(kind[4])
    x = randn(2, *(4, 3, 3)[:rank], 3)
    _check(kind, kw, _first(x) if kw.get("data_format") == "channels_first" else x)


DEPTHWISE = [dict(kernel_size=3, depth_multiplier=2),
             dict(kernel_size=2, strides=2, padding="same", activation="relu"),
             dict(kernel_size=3, dilation_rate=2, padding="same", depth_multiplier=3,
                  data_format="channels_first")]


@pytest.mark.parametrize("rank", [1, 2])
@pytest.mark.parametrize("kw", DEPTHWISE)
def test_depthwise_and_separable(rank, kw):
    x = randn(2, *(7, 6)[:rank], 3)
    x = _first(x) if kw.get("data_format") == "channels_first" else x
    _check(f"DepthwiseConv{rank}D", kw, x)
    _check(f"SeparableConv{rank}D", dict(filters=4, **kw), x)


POOL = [dict(pool_size=2), dict(pool_size=3, strides=2, padding="same"),
        dict(pool_size=2, strides=1, padding="same", data_format="channels_first")]


@pytest.mark.parametrize("kind", ["MaxPooling", "AveragePooling"])
@pytest.mark.parametrize("rank", [1, 3])
@pytest.mark.parametrize("kw", POOL)
def test_pooling(kind, rank, kw):
    shape = (7, 5, 6)[:rank] if rank == 1 else (5, 5, 5)
    if kind == "AveragePooling" and kw.get("padding") == "same" and \
            keras.backend.backend() == "torch":
        # Keras's torch backend averages padded cells in as edge replicas on asymmetric
        # 'same' padding; fkeras excludes them as TensorFlow/JAX (see test_pooling_nd.py).
        shape = (8,) if rank == 1 else (4, 4, 4)
        if kw["pool_size"] == 3:
            pytest.skip("asymmetric 'same' padding: Keras's torch backend differs")
    x = randn(2, *shape, 3)
    _check(f"{kind}{rank}D", kw, _first(x) if kw.get("data_format") == "channels_first" else x)


@pytest.mark.parametrize("kind", ["GlobalAveragePooling", "GlobalMaxPooling"])
@pytest.mark.parametrize("rank", [1, 2, 3])
@pytest.mark.parametrize("kw", [{}, dict(keepdims=True, data_format="channels_first")])
def test_global_pooling(kind, rank, kw):
    x = randn(2, *(5, 4, 3)[:rank], 3)
    _check(f"{kind}{rank}D", kw, _first(x) if kw else x)


def test_global_average_pooling1d_mask():
    x, mask = randn(3, 5, 2), np.array([[1, 1, 0, 0, 0], [1, 1, 1, 1, 1], [0, 1, 0, 1, 0]], bool)
    k = to_np(keras.layers.GlobalAveragePooling1D()(x, mask=mask))
    np.testing.assert_allclose(layers.GlobalAveragePooling1D()(x, mask=mask), k, rtol=RTOL,
                               atol=ATOL)


@pytest.mark.parametrize("kind,kw,rank", [
    ("UpSampling1D", dict(size=3), 1),
    ("UpSampling2D", dict(size=(2, 3)), 2),
    ("UpSampling2D", dict(size=(3, 2), interpolation="bilinear"), 2),
    ("UpSampling2D", dict(size=2, interpolation="bilinear", data_format="channels_first"), 2),
    ("UpSampling3D", dict(size=(1, 2, 3), data_format="channels_first"), 3),
    ("ZeroPadding1D", dict(padding=(1, 2)), 1),
    ("ZeroPadding2D", dict(padding=((1, 0), (2, 1)), data_format="channels_first"), 2),
    ("ZeroPadding2D", dict(padding=2), 2),
    ("ZeroPadding3D", dict(padding=(1, 0, 2)), 3),
    ("Cropping1D", dict(cropping=(1, 2)), 1),
    ("Cropping2D", dict(cropping=((1, 0), (2, 1))), 2),
    ("Cropping2D", dict(cropping=1, data_format="channels_first"), 2),
    ("Cropping3D", dict(cropping=((1, 1), (0, 1), (2, 0))), 3)])
def test_spatial_reshaping(kind, kw, rank):
    x = randn(2, *(5, 4, 6)[:rank], 3)
    _check(kind, kw, _first(x) if kw.get("data_format") == "channels_first" else x)
