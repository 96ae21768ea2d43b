"""UpSampling1D/2D/3D, ZeroPadding1D/2D/3D, Cropping1D/2D/3D: run_layer_test, values against
NumPy, Keras's argument forms and error texts."""

import numpy as np
import pytest
from conv_refs import bilinear_upsample
from layer_testing import run_layer_test

import fkeras
from fkeras import layers


def _first(a):
    return np.ascontiguousarray(np.moveaxis(a, -1, 1))


@pytest.mark.parametrize("cls,kw,shape,out", [
    (layers.UpSampling1D, dict(size=3), (2, 4, 3), (2, 12, 3)),
    (layers.UpSampling2D, dict(size=(2, 3)), (2, 3, 4, 2), (2, 6, 12, 2)),
    (layers.UpSampling2D, dict(interpolation="bilinear", data_format="channels_first"),
     (2, 2, 3, 4), (2, 2, 6, 8)),
    (layers.UpSampling3D, dict(size=(1, 2, 2)), (2, 2, 3, 2, 1), (2, 2, 6, 4, 1)),
    (layers.ZeroPadding1D, dict(padding=(1, 2)), (2, 4, 3), (2, 7, 3)),
    (layers.ZeroPadding2D, dict(padding=((1, 0), (2, 1)), data_format="channels_first"),
     (2, 3, 4, 5), (2, 3, 5, 8)),
    (layers.ZeroPadding3D, dict(padding=1), (2, 2, 3, 2, 1), (2, 4, 5, 4, 1)),
    (layers.Cropping1D, dict(cropping=(1, 2)), (2, 6, 3), (2, 3, 3)),
    (layers.Cropping2D, dict(cropping=((1, 0), (2, 1))), (2, 4, 5, 3), (2, 3, 2, 3)),
    (layers.Cropping3D, dict(cropping=1, data_format="channels_first"), (2, 1, 3, 4, 5),
     (2, 1, 1, 2, 3)),
])
def test_run_layer_test(cls, kw, shape, out):
    run_layer_test(cls, kw, input_shape=shape, expected_output_shape=out,
                   expected_num_trainable_weights=0)


def test_values():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4, 2)).astype(np.float32)
    np.testing.assert_array_equal(layers.UpSampling2D((2, 3))(x),
                                  np.repeat(np.repeat(x, 2, 1), 3, 2))
    np.testing.assert_allclose(layers.UpSampling2D((3, 2), interpolation="bilinear")(x),
                               bilinear_upsample(x, 3, 2), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        layers.UpSampling2D(2, data_format="channels_first", interpolation="bilinear")(
            _first(x)), _first(bilinear_upsample(x, 2, 2)), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(layers.UpSampling3D((1, 2, 1))(x[..., None]),
                                  np.repeat(x[..., None], 2, 2))
    np.testing.assert_array_equal(layers.ZeroPadding2D(((1, 0), (2, 1)))(x),
                                  np.pad(x, ((0, 0), (1, 0), (2, 1), (0, 0))))
    np.testing.assert_array_equal(layers.ZeroPadding1D(2, data_format="channels_first")(x[0]),
                                  np.pad(x[0], ((0, 0), (0, 0), (2, 2))))
    np.testing.assert_array_equal(layers.Cropping2D(((1, 0), (1, 2)))(x), x[:, 1:, 1:2])
    np.testing.assert_array_equal(layers.Cropping1D(1)(x[0]), x[0, :, 1:3])


def test_gradients_flow_through():
    x = np.random.default_rng(1).standard_normal((1, 3, 3, 1)).astype(np.float32)
    with fkeras.GradientTape() as tape:
        tape.watch(x)
        y = layers.Cropping2D(1)(layers.ZeroPadding2D(1)(layers.UpSampling2D(1)(x)))
    g = tape.gradient(y, x, output_gradients=np.full((1, 3, 3, 1), 2.0, np.float32))
    np.testing.assert_array_equal(g, np.full_like(x, 2.0))


def test_config_forms_and_errors():
    assert layers.ZeroPadding2D(2).get_config()["padding"] == ((2, 2), (2, 2))
    assert layers.ZeroPadding2D((1, 2)).padding == ((1, 1), (2, 2))
    assert layers.Cropping3D((1, 2, 3)).cropping == ((1, 1), (2, 2), (3, 3))
    assert "data_format" not in layers.Cropping1D().get_config()
    assert list(layers.UpSampling1D().get_config())[-1] == "size"
    with pytest.raises(ValueError, match="`padding` should have two elements"):
        layers.ZeroPadding2D((1, 2, 3))
    with pytest.raises(ValueError, match="Values in `cropping` argument should be smaller"):
        layers.Cropping2D(((2, 2), (0, 0)))(fkeras.Input(shape=(4, 4, 1)))
    with pytest.raises(TypeError, match="Expected an integer value for `size`"):
        layers.UpSampling1D(2.0)
    with pytest.raises(ValueError, match="`interpolation` argument should be one of"):
        layers.UpSampling2D(interpolation="area")
