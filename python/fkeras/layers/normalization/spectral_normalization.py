"""SpectralNormalization: divides a layer's kernel by its largest singular value (Keras 3)."""

import numpy as np

from fkeras import initializers
from fkeras.engine.input_spec import InputSpec
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.core.wrapper import Wrapper


def _l2_normalize(x):
    """Keras's ops.normalize(x, axis=None): x * min(rsqrt(sum(x^2)), 1 / 1e-7)."""
    with np.errstate(divide="ignore"):
        inv = 1.0 / np.sqrt(np.sum(np.square(x)))
    return x * min(inv, 1e7)


class SpectralNormalization(Wrapper):
    """Performs spectral normalization on the weights of the wrapped layer (Miyato et al.,
    2018), with Keras 3's semantics.

    In training (`training=True`), before the wrapped layer runs, `power_iterations` steps of
    the power method refine the estimate `u` (non-trainable weight `vector_u`, (1, K)) of the
    leading right singular vector of the kernel viewed as (-1, K); the kernel variable is then
    replaced by `kernel / sigma` with sigma = v W u^T, and `vector_u` by the new estimate (a
    kernel of zeros is left alone). The gradient flows to the kernel through the wrapped
    layer only, as in Keras (the normalization is an assignment, not part of the graph). In
    inference the wrapped layer runs with the kernel as it is.

    Args:
        layer: a layer with a `kernel` (Dense, Conv2D, ...) or `embeddings` (Embedding).
        power_iterations: int > 0, power-method steps per training call.

    Example:
    ```python
    y = SpectralNormalization(Conv2D(2, 2))(np.random.rand(1, 10, 10, 1))  # (1, 9, 9, 2)
    ```
    """

    def __init__(self, layer, power_iterations=1, **kwargs):
        super().__init__(layer, **kwargs)
        if power_iterations <= 0:
            raise ValueError("`power_iterations` should be greater than zero. Received: "
                             f"`power_iterations={power_iterations}`")
        self.power_iterations = power_iterations

    def build(self, input_shape):
        super().build(input_shape)
        self.input_spec = InputSpec(min_ndim=1, axes={-1: input_shape[-1]})
        if hasattr(self.layer, "kernel"):
            kernel = self.layer.kernel
        elif hasattr(self.layer, "embeddings"):
            kernel = self.layer.embeddings
        else:
            raise ValueError(f"{type(self.layer).__name__} object has no attribute 'kernel' "
                             "nor 'embeddings'")
        # Keras 3 tracks the kernel on the wrapper too (assigning it as an attribute does):
        # its own variables are [kernel, vector_u] (the `.keras` weight file holds the kernel
        # in both places).
        self.kernel = kernel
        self.kernel_shape = tuple(kernel.shape)
        self.vector_u = self.add_weight(shape=(1, self.kernel_shape[-1]),
                                        initializer=initializers.TruncatedNormal(stddev=0.02),
                                        trainable=False, name="vector_u")
        self.built = True

    def normalized_weights(self):
        """(new vector_u, normalized kernel) as arrays, from the current values."""
        dtype = self.kernel.numpy().dtype
        weights = self.kernel.numpy().reshape(-1, self.kernel_shape[-1])
        u = self.vector_u.numpy()
        v = None
        for _ in range(self.power_iterations):
            v = _l2_normalize(u @ weights.T)
            u = _l2_normalize(v @ weights)
        sigma = (v @ weights) @ u.T
        return u.astype(dtype), (weights / sigma).reshape(self.kernel_shape).astype(dtype)

    def call(self, inputs, training=False):
        if training and not isinstance(inputs, KerasTensor) and \
                np.any(self.kernel.numpy() != 0):
            new_u, new_kernel = self.normalized_weights()
            self.vector_u.assign(new_u)
            self.kernel.assign(new_kernel)
        return self.layer(inputs)

    def get_config(self):
        config = super().get_config()
        config["power_iterations"] = self.power_iterations
        return config
