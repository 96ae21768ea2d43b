"""Model: a Layer with training and inference APIs.

`Model(inputs, outputs)` returns a Functional model; subclassing `Model` and defining `call`
gives a subclassed model, as in Keras.
"""

from fkeras.engine import naming
from fkeras.engine.tracking import is_user_class
from fkeras.layers.layer import Layer
from fkeras.models import subclass_config
from fkeras.trainers.trainer import Trainer


def _is_functional_init(args, kwargs):
    """Whether a Model is being built as `Model(inputs, outputs)`: both given (positionally
    or by keyword) and made of KerasTensors. A subclass's own arguments (`VAE(encoder,
    decoder)`) are not."""
    if len(args) >= 2:
        inputs, outputs = args[0], args[1]
    elif len(args) == 1 and "outputs" in kwargs:
        inputs, outputs = args[0], kwargs["outputs"]
    elif "inputs" in kwargs and "outputs" in kwargs:
        inputs, outputs = kwargs["inputs"], kwargs["outputs"]
    else:
        return False
    from fkeras.engine.keras_tensor import KerasTensor
    from fkeras.utils import nest

    return any(isinstance(t, KerasTensor) for t in nest.flatten([inputs, outputs]))


_FUNCTIONAL_SUBCLASSES = {}


def _functional_subclass(cls):
    from fkeras.models.functional import Functional

    sub = _FUNCTIONAL_SUBCLASSES.get(cls)
    if sub is None:
        sub = _FUNCTIONAL_SUBCLASSES[cls] = type(cls.__name__, (cls, Functional),
                                                 {"__module__": cls.__module__})
    return sub


def _defines_init(cls):
    """Whether a Model subclass (below Model) has its own __init__."""
    for klass in cls.__mro__:
        if klass is Model:
            return False
        if "__init__" in vars(klass):
            return True
    return False


class Model(Trainer, Layer):
    """Groups layers into an object with training and inference features (the Trainer mixin:
    compile, fit, evaluate, predict, ...)."""

    def __new__(cls, *args, **kwargs):
        if _is_functional_init(args, kwargs) or cls is Model and len(args) == 2:
            from fkeras.models.functional import Functional

            if cls is Model:
                return Functional.__new__(Functional)
            if not issubclass(cls, Functional) and not _defines_init(cls):
                # class Custom(Model) with a custom train_step, built as Custom(inputs,
                # outputs): a Functional model with Custom's methods (Keras 3 does the same).
                return super().__new__(_functional_subclass(cls))
        instance = super().__new__(cls)
        if cls is not Model and is_user_class(cls):
            subclass_config.record_init_args(instance, cls, args, kwargs)
        return instance

    def __init__(self, *args, **kwargs):
        from fkeras.models.functional import Functional

        if _is_functional_init(args, kwargs) and not isinstance(self, Functional):
            # A subclass with its own __init__ decides here, as in Keras 3, from what it passes
            # to Model.__init__: GAN(disc, gen) calling super().__init__() stays subclassed;
            # Custom(*args) forwarding (inputs, outputs) becomes Functional.
            self.__class__ = _functional_subclass(type(self))
            Functional.__init__(self, *args, **kwargs)
            return
        if type(self) is Model or not _is_functional_init(args, kwargs):
            name = kwargs.pop("name", None)
            Layer.__init__(self, name=name or naming.unique_name(
                naming.to_snake_case(type(self).__name__)), **kwargs)

    def get_config(self):
        """The model's config. A subclassed model whose class does not override `get_config`
        gets Keras 3's automatic config: its constructor arguments (when they are plain
        values) plus `name`, `trainable` and `dtype` (fkeras/models/subclass_config.py)."""
        base = Layer.get_config(self)
        if type(self).get_config is Model.get_config and is_user_class(type(self)):
            return subclass_config.auto_config(self, base)
        return base

    @classmethod
    def from_config(cls, config, custom_objects=None):
        if "input_layers" in config and "output_layers" in config:
            from fkeras.models.functional import Functional

            return Functional.from_config(config, custom_objects)
        try:
            return cls(**config)
        except TypeError as e:
            raise TypeError(
                "Unable to revive model from config. When overriding the `get_config()` "
                "method, make sure that the returned config contains all items used as "
                f"arguments in the constructor to {cls}, which is the default behavior. You "
                "can override this default behavior by defining a `from_config(cls, config)` "
                f"class method to specify how to create an instance of {cls.__name__} from "
                f"its config.\n\nReceived config={config}\n\nError encountered during "
                f"deserialization: {e}") from None

    def build_from_config(self, config):
        """Builds the model from `get_build_config()`'s dict: its own `build` when the class
        defines one, else by calling it on symbolic inputs of the recorded shape (Keras 3);
        warns when neither works."""
        subclass_config.build_from_config(self, config)

    def to_json(self, **kwargs):
        """The model's architecture as a JSON string, in Keras 3's layout (the model entry of a
        `.keras` file's config.json, with the compile config when compiled); `kwargs` go to
        `json.dumps`. `fkeras.models.model_from_json` reads it back."""
        import json

        from fkeras.saving.saving_lib import model_config

        return json.dumps(model_config(self), **kwargs)

    def export(self, filepath, format="onnx", verbose=None, input_signature=None, **kwargs):
        """Exports the model's inference graph (Keras 3's `Model.export`).

        fkeras writes `format="onnx"` (its default: Keras 3's default, "tf_saved_model",
        needs TensorFlow); Keras's other formats raise a ValueError saying so.

        Args:
            filepath: `str` or `pathlib.Path`, the file to write.
            format: "onnx".
            verbose: whether to print a message once written (None: True).
            input_signature: optional specs (objects with `.shape`, or shape tuples), one per
                model input; a fixed size replaces a None of the input shape.
            **kwargs: `opset_version` (int, default 18).

        Example:
        ```python
        model.export("model.onnx", format="onnx")
        session = onnxruntime.InferenceSession("model.onnx")
        predictions = session.run(None, {"input_layer": x})
        ```
        """
        from fkeras.export.formats import check_format

        check_format(format)
        from fkeras.export.onnx_export import export_onnx

        export_onnx(self, filepath, verbose=verbose, input_signature=input_signature, **kwargs)

    def quantize(self, mode=None, config=None, filters=None, **kwargs):
        """Quantizes the weights of the built model in place (Keras 3): every leaf layer that
        implements `quantize` (Dense, EinsumDense, Embedding) is quantized, the others are
        skipped with a warning.

        Args:
            mode: "int8" (Keras's "int4", "float8", "gptq", "awq" are not provided: ValueError).
            config: an `Int8QuantizationConfig` (optional when `mode` is given).
            filters: a regex string, a list of them (matched against layer names) or a
                callable `layer -> bool`: only the layers selected are quantized.

        Example:
        ```python
        model.quantize("int8")
        ```
        """
        from fkeras.models.quantize import quantize_model

        quantize_model(self, mode, config, filters, **kwargs)

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
