"""CategoryEncoding: integer ids to one-hot, multi-hot or count vectors."""

import numpy as np

from fkeras.backend import devices as _devices
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.layers.layer import Layer
from fkeras.layers.preprocessing import encoding


class CategoryEncoding(Layer):
    """Encodes integer features (ids in `[0, num_tokens)`) as dense vectors (Keras 3).

    "multi_hot" (default) marks the ids present in each sample (the ids of a sample are on
    axis 1, or the whole vector for rank-1 input), "count" counts them (weighted by the call
    argument `count_weights`, which then gives the output dtype), "one_hot" encodes each id
    (a trailing axis of size 1 is dropped). Negative ids encode as zeros; an id >= num_tokens
    is an error. Keras 2's "binary" is read as "multi_hot".

    Args:
        num_tokens: the number of ids (output depth).
        output_mode: "multi_hot", "one_hot" or "count".
        sparse: must be False (fkeras has no sparse tensors; Keras's torch backend neither).

    Example:
    ```python
    CategoryEncoding(4, output_mode="count")(np.array([[0, 1, 1], [3, 3, 2]]))
    # [[1, 2, 0, 0], [0, 0, 1, 2]]
    ```
    """

    def __init__(self, num_tokens=None, output_mode="multi_hot", sparse=False, **kwargs):
        super().__init__(**kwargs)
        if output_mode == "binary":
            output_mode = "multi_hot"
        encoding.check_output_mode(output_mode, ("count", "one_hot", "multi_hot"), self.name)
        if num_tokens is None:
            raise ValueError("num_tokens must be set to use this layer. If the number of "
                             "tokens is not known beforehand, use the IntegerLookup layer "
                             "instead.")
        if isinstance(num_tokens, bool) or not isinstance(num_tokens, (int, np.integer)) \
                or num_tokens < 1:
            raise ValueError(f"`num_tokens` must be >= 1. Received: num_tokens={num_tokens}.")
        if sparse:
            raise ValueError(f'Layer "{self.name}": `sparse=True` is not supported by fkeras '
                             "(no sparse tensors). Received: sparse=True")
        self.num_tokens = int(num_tokens)
        self.output_mode = output_mode
        self.sparse = False

    def call(self, inputs, count_weights=None):
        if count_weights is not None and self.output_mode != "count":
            raise ValueError("`count_weights` is not used when `output_mode` is not "
                             f"`'count'`. Received `count_weights={count_weights}`.")
        if isinstance(inputs, KerasTensor):
            return KerasTensor(self.compute_output_shape(inputs.shape), self.dtype)
        return encoding.encode(_devices.host_array(inputs), self.output_mode, self.num_tokens,
                               self.dtype, self.name,
                               None if count_weights is None else np.asarray(count_weights))

    def compute_output_shape(self, input_shape):
        return encoding.encoded_shape(input_shape, self.output_mode, self.num_tokens)

    def get_config(self):
        config = super().get_config()
        config.update({"num_tokens": self.num_tokens, "output_mode": self.output_mode})
        return config
