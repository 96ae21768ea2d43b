"""Custom convolutions through `Conv.convolution_op(inputs, kernel)` (keras-io's "subclassing
conv layers" recipe): a Conv2D/Conv3D subclass either overrides the hook (the layer's `call`
then runs it, adds the bias and applies the activation) or overrides `call` and calls the
hook with a transformed kernel. Values and trained weights compared with Keras 3 (torch), the
forward also with a NumPy float64 reference."""

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view
from patterns_parity import losses_trained, run_both, seed_weights, to_np

import fkeras

rng = np.random.RandomState(31)
X2 = rng.standard_normal((8, 7, 6, 3)).astype("float32")
X3 = rng.standard_normal((4, 5, 5, 4, 2)).astype("float32")
Y = rng.randint(0, 3, (8,)).astype("int32")


def standardized_layers(lib):
    """The two ways of the recipe, written once for either library."""
    ops = lib.ops

    def standardize(kernel):
        axes = list(range(len(kernel.shape) - 1))
        mean, var = ops.moments(kernel, axes=axes, keepdims=True)
        return (kernel - mean) / ops.sqrt(var + 1e-5)

    class WithOverride2D(lib.layers.Conv2D):
        def convolution_op(self, inputs, kernel):
            return ops.conv(inputs, standardize(kernel), strides=list(self.strides),
                            padding=self.padding, data_format=self.data_format)

    class WithOverride3D(lib.layers.Conv3D):
        def convolution_op(self, inputs, kernel):
            return ops.conv(inputs, standardize(kernel), padding="valid")

    class WithCall2D(lib.layers.Conv2D):
        def call(self, inputs):
            result = self.convolution_op(inputs, standardize(self.kernel))
            if self.use_bias:
                result = result + self.bias
            return result

    return {"override2d": WithOverride2D, "override3d": WithOverride3D, "call2d": WithCall2D}


def numpy_standardized_conv(x, kernel, bias, stride=1):
    """float64 reference: valid-padding NHWC convolution with the standardized kernel."""
    x, kernel = x.astype(np.float64), kernel.astype(np.float64)
    axes = tuple(range(kernel.ndim - 1))
    k = (kernel - kernel.mean(axes, keepdims=True)) / np.sqrt(kernel.var(axes, keepdims=True)
                                                              + 1e-5)
    spatial = kernel.ndim - 2
    win = sliding_window_view(x, k.shape[:spatial], axis=tuple(range(1, spatial + 1)))
    win = win[(slice(None),) + (slice(None, None, stride),) * spatial]
    letters = "abc"[:spatial]
    y = np.einsum(f"n{letters}i{letters.upper()}->n{letters}i{letters.upper()}", win)
    y = np.einsum(f"n{letters}i{letters.upper()},{letters.upper()}io->n{letters}o", y, k)
    return y + bias


CASES = {
    "override2d": (X2, dict(filters=4, kernel_size=3, strides=2, activation="relu")),
    "override3d": (X3, dict(filters=3, kernel_size=2, activation="tanh")),
    "call2d": (X2, dict(filters=4, kernel_size=(2, 3))),
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_custom_convolution_matches_numpy_reference(kind):
    x, kwargs = CASES[kind]
    layer = standardized_layers(fkeras)[kind](**kwargs)
    layer.build(x.shape)
    k = rng.standard_normal(layer.kernel.shape).astype("float32")
    b = rng.standard_normal(layer.bias.shape).astype("float32")
    layer.set_weights([k, b])
    want = numpy_standardized_conv(x, k, b, stride=layer.strides[0])
    act = {"relu": lambda v: np.maximum(v, 0), "tanh": np.tanh}.get(kwargs.get("activation"),
                                                                      lambda v: v)
    got = to_np(layer(x))
    np.testing.assert_allclose(got, act(want), rtol=1e-4, atol=1e-4)
    # The hook's output shape is the layer's, symbolically too.
    assert layer.compute_output_shape(x.shape) == got.shape


@pytest.mark.parametrize("kind", sorted(CASES))
def test_custom_convolution_trains_like_keras(kind):
    x, kwargs = CASES[kind]
    kwargs = dict(kwargs, name="custom")

    def train(lib):
        layer_cls = standardized_layers(lib)[kind]
        model = lib.Sequential([lib.Input(x.shape[1:]), layer_cls(**kwargs),
                                lib.layers.Flatten(), lib.layers.Dense(3)])
        seed_weights(model, seed=5)
        model.compile(lib.optimizers.SGD(0.05),
                      lib.losses.SparseCategoricalCrossentropy(from_logits=True))
        history = model.fit(x, Y[:len(x)], batch_size=4, epochs=3, shuffle=False, verbose=0)
        losses_trained(history.history["loss"])
        return {"loss": history.history["loss"], "weights": model.get_weights()}

    run_both(train, rtol=2e-4, atol=2e-5)


def test_default_convolution_op_is_the_bare_convolution():
    layer = fkeras.layers.Conv2D(4, 3, padding="same", activation="relu", dilation_rate=2)
    y = to_np(layer(X2))
    pre = to_np(layer.convolution_op(X2, layer.kernel)) + to_np(layer.bias)
    np.testing.assert_allclose(y, np.maximum(pre, 0), rtol=1e-5, atol=1e-5)


def test_gradient_reaches_kernel_through_override():
    layer = standardized_layers(fkeras)["override2d"](filters=4, kernel_size=3)
    layer.build(X2.shape)
    cot = rng.standard_normal(layer.compute_output_shape(X2.shape)).astype("float32")
    with fkeras.GradientTape() as tape:
        loss = fkeras.ops.sum(layer(X2) * cot)
    dk, db = tape.gradient(loss, [layer.kernel, layer.bias])
    # Each filter's standardized kernel ignores that filter's mean and (up to epsilon) its
    # scale, so per filter the gradient sums to 0 and is orthogonal to the kernel; the plain
    # convolution's gradient (the hook skipped) is neither.
    dk, k = to_np(dk), to_np(layer.kernel)
    norms = np.sqrt((dk ** 2).sum(axis=(0, 1, 2)) * (k ** 2).sum(axis=(0, 1, 2)))
    assert np.abs(dk).max() > 1e-3
    np.testing.assert_allclose(dk.sum(axis=(0, 1, 2)), 0.0, atol=1e-4)
    np.testing.assert_array_less(np.abs((dk * k).sum(axis=(0, 1, 2))), 1e-2 * norms)
    np.testing.assert_allclose(to_np(db), cot.sum(axis=(0, 1, 2)), rtol=1e-5)


def test_conv1d_call_ignores_the_hook_like_keras():
    class Conv1DHook(fkeras.layers.Conv1D):
        def convolution_op(self, inputs, kernel):
            return fkeras.ops.conv(inputs, kernel * 0.0)

    x = X2[:, 0]
    layer = Conv1DHook(2, 3)
    plain = fkeras.layers.Conv1D(2, 3)
    layer.build(x.shape)
    plain.build(x.shape)
    plain.set_weights(layer.get_weights())
    np.testing.assert_allclose(to_np(layer(x)), to_np(plain(x)), rtol=1e-6)
