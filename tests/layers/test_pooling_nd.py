"""MaxPooling1D/3D, AveragePooling1D/3D and the global poolings: run_layer_test, values
against direct NumPy windows (conv_refs.pool_nd), keepdims/data_format, aliases, errors."""

import numpy as np
import pytest
from conv_refs import pool_nd
from layer_testing import run_layer_test

import fkeras
from fkeras import layers


def _first(a):
    return np.ascontiguousarray(np.moveaxis(a, -1, 1))


@pytest.mark.parametrize("cls,kw,shape,out", [
    (layers.MaxPooling1D, {}, (2, 7, 3), (2, 3, 3)),
    (layers.AveragePooling1D, dict(pool_size=3, strides=2, padding="same"), (2, 7, 3),
     (2, 4, 3)),
    (layers.MaxPooling3D, dict(padding="same", data_format="channels_first"),
     (2, 3, 5, 4, 3), (2, 3, 3, 2, 2)),
    (layers.AveragePooling3D, dict(pool_size=(2, 3, 2), strides=1), (2, 4, 5, 3, 2),
     (2, 3, 3, 2, 2)),
    (layers.GlobalAveragePooling1D, {}, (2, 5, 3), (2, 3)),
    (layers.GlobalMaxPooling2D, dict(keepdims=True), (2, 4, 5, 3), (2, 1, 1, 3)),
    (layers.GlobalAveragePooling3D, dict(data_format="channels_first", keepdims=True),
     (2, 3, 2, 4, 2), (2, 3, 1, 1, 1)),
    (layers.GlobalMaxPooling3D, {}, (2, 3, 2, 4, 2), (2, 2)),
])
def test_run_layer_test(cls, kw, shape, out):
    run_layer_test(cls, kw, input_shape=shape, expected_output_shape=out,
                   expected_num_trainable_weights=0)


@pytest.mark.parametrize("mode", ["max", "avg"])
@pytest.mark.parametrize("rank,pool,strides,padding", [
    (1, (3,), (2,), "same"), (1, (2,), (1,), "valid"),
    (3, (2, 2, 2), (2, 2, 2), "valid"), (3, (3, 2, 3), (2, 1, 2), "same")])
@pytest.mark.parametrize("fmt", ["channels_last", "channels_first"])
def test_values(mode, rank, pool, strides, padding, fmt):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2,) + (7, 5, 6)[:rank] + (3,)).astype(np.float32)
    cls = getattr(layers, f"{'MaxPooling' if mode == 'max' else 'AveragePooling'}{rank}D")
    layer = cls(pool, strides, padding, data_format=fmt)
    y = np.asarray(layer(x if fmt == "channels_last" else _first(x)))
    want = pool_nd(x, pool, strides, padding, mode)
    np.testing.assert_allclose(y, want if fmt == "channels_last" else _first(want), rtol=1e-6,
                               atol=1e-6)


def test_global_pooling_values_and_mask():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 5, 3)).astype(np.float32)
    np.testing.assert_allclose(layers.GlobalAveragePooling2D()(x), x.mean(axis=(1, 2)),
                               rtol=1e-6)
    np.testing.assert_allclose(layers.GlobalMaxPooling2D(data_format="channels_first")(x),
                               x.max(axis=(2, 3)))
    mask = np.array([[1, 0, 1, 1], [0, 0, 1, 0]], bool)
    y = layers.GlobalAveragePooling1D()(x[:, :, 0], mask=mask)
    want = (x[:, :, 0] * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    np.testing.assert_allclose(y, want, rtol=1e-6)


def test_pooling_gradients():
    x = np.random.default_rng(2).permutation(2 * 4 * 4 * 4 * 2).reshape(2, 4, 4, 4, 2)
    x = x.astype(np.float32)
    cot = np.random.default_rng(3).standard_normal((2, 2, 2, 2, 2)).astype(np.float32)
    with fkeras.GradientTape() as tape:
        tape.watch(x)
        y = layers.MaxPooling3D()(x)
    g = np.asarray(tape.gradient(y, x, output_gradients=cot))
    # Each window's cotangent lands on its maximum, nowhere else.
    blocks = x.reshape(2, 2, 2, 2, 2, 2, 2, 2).transpose(0, 1, 3, 5, 7, 2, 4, 6)
    arg = blocks.reshape(2, 2, 2, 2, 2, 8).argmax(-1)
    want = np.zeros((2, 2, 2, 2, 2, 8), np.float32)
    np.put_along_axis(want, arg[..., None], cot[..., None], axis=-1)
    want = want.reshape(2, 2, 2, 2, 2, 2, 2, 2).transpose(0, 1, 5, 2, 6, 3, 7, 4)
    np.testing.assert_array_equal(g, want.reshape(x.shape))


def test_aliases_config_and_errors():
    assert layers.MaxPool1D is layers.MaxPooling1D and layers.AvgPool3D is layers.AveragePooling3D
    assert layers.GlobalAvgPool2D is layers.GlobalAveragePooling2D
    assert layers.GlobalMaxPool3D is layers.GlobalMaxPooling3D
    cfg = layers.MaxPooling3D((2, 1, 2), padding="same").get_config()
    assert cfg["pool_size"] == (2, 1, 2) and cfg["strides"] == (2, 1, 2)
    assert list(layers.GlobalMaxPooling1D().get_config())[-2:] == ["data_format", "keepdims"]
    with pytest.raises(ValueError, match="The `pool_size` argument must be a tuple of 3"):
        layers.MaxPooling3D(pool_size=(2, 2))
    with pytest.raises(ValueError, match="expected ndim=3, found ndim=4"):
        layers.GlobalAveragePooling1D()(fkeras.Input(shape=(4, 4, 2)))
    with pytest.raises(ValueError, match="Computed output size would be zero or negative"):
        layers.AveragePooling3D(3)(fkeras.Input(shape=(2, 4, 4, 1)))
