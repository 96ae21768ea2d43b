"""Subtract, Multiply, Average, Maximum, Minimum, Dot and the functional forms: the catalogue
checks, values against NumPy float64, broadcasting, gradients and Keras's error texts."""

import pathlib
import sys

import numpy as np
import pytest
from layer_testing import run_layer_test

import fkeras
from fkeras import layers

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "ops"))
from op_testing import fd_check  # noqa: E402

NUMPY = {"Add": lambda xs: sum(xs), "Subtract": lambda xs: xs[0] - xs[1],
         "Multiply": lambda xs: np.prod(np.broadcast_arrays(*xs), axis=0),
         "Average": lambda xs: sum(xs) / len(xs),
         "Maximum": lambda xs: np.max(np.broadcast_arrays(*xs), axis=0),
         "Minimum": lambda xs: np.min(np.broadcast_arrays(*xs), axis=0)}
FUNCTIONAL = {"Add": layers.add, "Subtract": layers.subtract, "Multiply": layers.multiply,
              "Average": layers.average, "Maximum": layers.maximum, "Minimum": layers.minimum}


def _xs(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


@pytest.mark.parametrize("name", sorted(NUMPY))
@pytest.mark.parametrize("shapes,out", [([(2, 3, 4), (2, 3, 4)], (2, 3, 4)),
                                        ([(2, 3, 1), (2, 3, 4)], (2, 3, 4)),
                                        ([(2, 4), (2, 3, 4)], (2, 3, 4))])
def test_elementwise_merges(name, shapes, out):
    cls = getattr(layers, name)
    run_layer_test(cls, {}, input_shape=list(shapes), expected_output_shape=out,
                   expected_num_trainable_weights=0, supports_masking=True,
                   run_training_check=False)
    xs = _xs(*shapes)
    # Keras's rule: a lower-rank input gains axes right after the batch axis.
    expanded = [x.reshape(x.shape[:1] + (1,) * (len(out) - x.ndim) + x.shape[1:]) for x in xs]
    want = NUMPY[name]([e.astype(np.float64) for e in expanded])
    np.testing.assert_allclose(cls()(xs), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(FUNCTIONAL[name](xs), want, rtol=1e-6, atol=1e-6)
    ys = [fkeras.Input(batch_shape=s) for s in shapes]
    assert FUNCTIONAL[name](ys).shape == out


@pytest.mark.parametrize("name", ["Add", "Multiply", "Average", "Maximum", "Minimum"])
def test_three_inputs_and_gradients(name):
    xs = [x.astype(np.float64) for x in _xs((2, 3), (2, 3), (2, 1), seed=1)]
    want = NUMPY[name](xs)
    np.testing.assert_allclose(getattr(layers, name)()(xs), want, rtol=1e-6)  # cpu: float32
    fd_check(lambda *t: getattr(layers, name)()(list(t)), xs, wrt=(0, 1, 2),
             rng=np.random.default_rng(2))


def test_subtract_needs_two_inputs():
    a = fkeras.Input(shape=(3,))
    with pytest.raises(ValueError) as info:
        layers.Subtract()([a, a, a])
    assert str(info.value) == ("A `Subtract` layer should be called on exactly 2 inputs. "
                               "Received: input_shape=[(None, 3), (None, 3), (None, 3)]")
    fd_check(lambda p, q: layers.Subtract()([p, q]), [x.astype(np.float64) for x in
                                                      _xs((2, 3), (2, 3))],
             wrt=(0, 1), rng=np.random.default_rng(3))


def test_merge_batch_size_mismatch():
    with pytest.raises(ValueError) as info:
        layers.Add()([fkeras.Input(batch_shape=(2, 3)), fkeras.Input(batch_shape=(4, 3))])
    assert str(info.value) == ("Cannot merge tensors with different batch sizes. Received "
                               "tensors with shapes [(2, 3), (4, 3)]")


def test_merge_compute_mask_is_the_or():
    m1, m2 = np.array([[1, 0, 0]], bool), np.array([[0, 0, 1]], bool)
    out = layers.Add().compute_mask([np.ones((1, 3, 2))] * 2, [m1, m2])
    np.testing.assert_array_equal(out, [[True, False, True]])
    assert layers.Add().compute_mask([np.ones((1, 3))] * 2, [m1, None]) is None


def _batch_dot_ref(x, y, a1, a2):
    out = np.stack([np.tensordot(x[i], y[i], axes=(a1 - 1, a2 - 1)) for i in range(len(x))])
    return out.reshape(len(x), 1) if out.ndim == 1 else out


@pytest.mark.parametrize("shapes,axes,out", [
    ([(2, 5), (2, 5)], 1, (2, 1)),
    ([(2, 5), (2, 5)], -1, (2, 1)),
    ([(2, 3, 4), (2, 4, 5)], (2, 1), (2, 3, 5)),
    ([(2, 3, 4), (2, 3, 5)], 1, (2, 4, 5)),
    ([(2, 4), (2, 4, 6)], [1, 1], (2, 6)),
    ([(2, 3, 4), (2, 4)], [-1, -1], (2, 3)),
    ([(2, 3, 4, 2), (2, 4, 5)], (2, 1), (2, 3, 2, 5)),
])
@pytest.mark.parametrize("normalize", [False, True])
def test_dot(shapes, axes, out, normalize):
    run_layer_test(layers.Dot, {"axes": axes, "normalize": normalize}, input_shape=list(shapes),
                   expected_output_shape=out, expected_num_trainable_weights=0,
                   run_training_check=False)
    xs = [x.astype(np.float64) for x in _xs(*shapes, seed=4)]
    ax = [axes, axes] if isinstance(axes, int) else list(axes)
    a1, a2 = ax[0] % len(shapes[0]), ax[1] % len(shapes[1])
    refs = xs
    if normalize:
        refs = [xs[0] / np.linalg.norm(xs[0], axis=a1, keepdims=True),
                xs[1] / np.linalg.norm(xs[1], axis=a2, keepdims=True)]
    want = _batch_dot_ref(refs[0], refs[1], a1, a2)
    np.testing.assert_allclose(layers.dot([x.astype(np.float32) for x in xs], axes=axes,
                                          normalize=normalize), want, rtol=1e-5, atol=1e-6)
    fd_check(lambda p, q: layers.Dot(axes, normalize=normalize)([p, q]), xs, wrt=(0, 1),
             rng=np.random.default_rng(5))


def test_dot_errors():
    a, b = fkeras.Input(shape=(3,)), fkeras.Input(shape=(4,))
    with pytest.raises(ValueError) as info:
        layers.Dot(axes=1)([a, b])
    assert str(info.value) == ("Incompatible input shapes: axis values 3 (at axis 1) != 4 (at "
                               "axis 1). Full input shapes: (None, 3), (None, 4)")
    with pytest.raises(ValueError, match="A `Dot` layer should be called on a list of 2 inputs"):
        layers.Dot(axes=1)([a, a, a])
    with pytest.raises(ValueError, match="Cannot perform batch_dot over axis 0"):
        layers.Dot(axes=0)([a, a])
    with pytest.raises(TypeError, match="Invalid type for argument `axes`"):
        layers.Dot(axes="1")
    with pytest.raises(ValueError, match="it should contain two elements"):
        layers.Dot(axes=[1, 1, 1])
    with pytest.raises(ValueError, match='Invalid `axes` for layer "d": axis 3 is out of range'):
        layers.Dot(axes=3, name="d")([a, a])


def test_concatenate_functional_and_run_layer_test():
    for axis, out in [(-1, (2, 3, 9)), (1, (2, 6, 4))]:
        shapes = [(2, 3, 4), (2, 3, 5)] if axis == -1 else [(2, 3, 4), (2, 3, 4)]
        run_layer_test(layers.Concatenate, {"axis": axis}, input_shape=shapes,
                       expected_output_shape=out, supports_masking=True,
                       run_training_check=False)
    xs = _xs((2, 3), (2, 2))
    np.testing.assert_array_equal(layers.concatenate(xs), np.concatenate(xs, -1))
    with pytest.raises(ValueError, match="Invalid axis 3"):
        layers.Concatenate(axis=3)([fkeras.Input(shape=(3,)), fkeras.Input(shape=(3,))])


def test_merges_train_inside_a_model():
    a, b = fkeras.Input(shape=(4,)), fkeras.Input(shape=(4,))
    ha, hb = layers.Dense(4)(a), layers.Dense(4)(b)
    h = layers.concatenate([layers.add([ha, hb]), layers.subtract([ha, hb]),
                            layers.multiply([ha, hb]), layers.average([ha, hb]),
                            layers.maximum([ha, hb]), layers.minimum([ha, hb]),
                            layers.dot([ha, hb], axes=1, normalize=True)])
    model = fkeras.Model([a, b], layers.Dense(1)(h))
    model.compile(optimizer="sgd", loss="mse")
    xa, xb = _xs((8, 4), (8, 4), seed=6)
    hist = model.fit([xa, xb], xa[:, :1], epochs=2, verbose=0)
    assert np.all(np.isfinite(hist.history["loss"]))
    config = model.get_config()
    clone = fkeras.Model.from_config(config)
    clone.set_weights(model.get_weights())
    np.testing.assert_allclose(clone.predict([xa, xb], verbose=0),
                               model.predict([xa, xb], verbose=0), rtol=1e-6)
