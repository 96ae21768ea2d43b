"""Model: a Layer with training and inference APIs.

`Model(inputs, outputs)` returns a Functional model; subclassing `Model` and defining `call`
gives a subclassed model, as in Keras.
"""

import numpy as np

from fkeras.engine import naming
from fkeras.layers.layer import Layer
from fkeras.utils import nest


def _is_functional_init(args, kwargs):
    return len(args) == 2 or (len(args) == 1 and "outputs" in kwargs) or (
        "inputs" in kwargs and "outputs" in kwargs)


class Model(Layer):
    """Groups layers into an object with training and inference features."""

    def __new__(cls, *args, **kwargs):
        if cls is Model and _is_functional_init(args, kwargs):
            from fkeras.models.functional import Functional

            return Functional.__new__(Functional)
        return super().__new__(cls)

    def __init__(self, *args, **kwargs):
        if type(self) is Model or not _is_functional_init(args, kwargs):
            name = kwargs.pop("name", None)
            Layer.__init__(self, name=name or naming.unique_name(
                naming.to_snake_case(type(self).__name__)), **kwargs)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        if "input_layers" in config and "output_layers" in config:
            from fkeras.models.functional import Functional

            return Functional.from_config(config, custom_objects)
        return cls(**config)

    # ---- inference ----
    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """Generates output predictions for the input samples, in batches (inference mode)."""
        from fkeras.models.data_checks import as_input_arrays, check_model_inputs, num_samples

        arrays = as_input_arrays(self, x)
        if getattr(self, "_flat_inputs", None) is not None:
            check_model_inputs(self, arrays, context="predict")
        n = num_samples(arrays)
        batch_size = 32 if batch_size is None else int(batch_size)
        if batch_size <= 0:
            raise ValueError(f"`batch_size` must be a positive integer, received {batch_size}.")
        outs = []
        for start in range(0, n, batch_size):
            batch = [a[start:start + batch_size] for a in arrays]
            inputs = batch[0] if len(batch) == 1 else batch
            outs.append(nest.flatten(self(inputs, training=False)))
        if not outs:
            raise ValueError("Expected input data to be non-empty.")
        flat = [np.concatenate([o[i] for o in outs], axis=0) for i in range(len(outs[0]))]
        structure = getattr(self, "_outputs_structure", None)
        if len(flat) == 1:  # one output: its array, even for outputs=[y] (as Keras)
            return flat[0]
        if structure is not None:
            return nest.pack_like(structure, flat)
        return flat

    def predict_on_batch(self, x):
        from fkeras.models.data_checks import as_input_arrays

        arrays = as_input_arrays(self, x)
        return self(arrays[0] if len(arrays) == 1 else arrays, training=False)

    # ---- inspection ----
    def get_layer(self, name=None, index=None):
        if index is not None and name is not None:
            raise ValueError("Provide only a layer name or a layer index. Received: "
                             f"index={index}, name={name}.")
        if index is not None:
            if len(self.layers) <= index:
                raise ValueError(f"Was asked to retrieve layer at index {index} but model only "
                                 f"has {len(self.layers)} layers.")
            return self.layers[index]
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}. Existing layers are: "
                         f"{[lyr.name for lyr in self.layers]}.")

    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False,
                show_trainable=False, layer_range=None):
        """Prints a string summary of the network (Keras 2 table layout)."""
        from fkeras.models.summary import print_summary

        print_summary(self, line_length=line_length, positions=positions, print_fn=print_fn)
