"""Lambda: wraps an arbitrary function of fkeras.ops calls as a layer."""

import base64
import inspect
import marshal
import types

import numpy as np

from fkeras.engine.keras_tensor import KerasTensor
from fkeras.engine.tensor import run_user
from fkeras.layers.layer import Layer
from fkeras.utils import nest


class Lambda(Layer):
    """Applies `function` to the inputs (differentiable when it is written with fkeras.ops).

    Args:
        function: a callable taking the input tensor(s) (plus `mask` / `training` if it
            accepts them, plus `arguments`).
        output_shape: None (inferred by running `function` on symbolic tensors), a shape
            without the batch dimension (or a list of them), or a callable from input shape
            to output shape (batch dimension included).
        mask: None, a callable (inputs, mask) -> mask, or a constant mask.
        arguments: a dict of extra keyword arguments for `function`.

    Example:
    ```python
    y = Lambda(lambda t: fkeras.ops.square(t))(Input(shape=(4,)))   # y.shape == (None, 4)
    ```
    """

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        if not callable(function):
            raise ValueError(f"`function` must be callable. Received: function={function!r}")
        self.function = function
        self._output_shape = _tuple_shapes(output_shape)
        self.mask = mask
        self.arguments = dict(arguments or {})
        params = _parameters(function)
        self._fn_expects_mask = "mask" in params
        self._fn_expects_training = "training" in params
        self.supports_masking = mask is not None
        self.built = True

    def call(self, inputs, mask=None, training=None):
        if self._output_shape is not None and any(
                isinstance(t, KerasTensor) for t in nest.flatten(inputs)):
            return _tensors(self.compute_output_shape(_shapes_of(inputs)))
        kwargs = dict(self.arguments)
        if self._fn_expects_mask:
            kwargs["mask"] = mask
        if self._fn_expects_training:
            kwargs["training"] = training
        return run_user(self.function, inputs, **kwargs)

    def compute_output_shape(self, input_shape):
        if self._output_shape is None:
            try:
                out = self.function(_tensors(input_shape), **self.arguments)
            except Exception as e:
                raise NotImplementedError(
                    "We could not automatically infer the shape of the Lambda's output. Please "
                    f"specify the `output_shape` argument for this Lambda layer. ({e})") from e
            return nest.map_structure(lambda t: tuple(t.shape), out)
        if callable(self._output_shape):
            return self._output_shape(input_shape)
        batch = nest.flatten(input_shape)[0] if input_shape else None
        if _is_shape_list(self._output_shape):
            return [(batch,) + s for s in self._output_shape]
        return (batch,) + self._output_shape

    def compute_mask(self, inputs, mask=None):
        if callable(self.mask):
            return self.mask(inputs, mask)
        return self.mask

    # ---- config ----
    def get_config(self):
        config = super().get_config()
        config["function"] = _serialize_function(self.function)
        if self._output_shape is not None:
            config["output_shape"] = (_serialize_function(self._output_shape)
                                      if callable(self._output_shape) else self._output_shape)
        if self.mask is not None:
            config["mask"] = _serialize_function(self.mask) if callable(self.mask) else self.mask
        config["arguments"] = self.arguments
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None, safe_mode=None):
        """A Lambda from its config. Functions named in the config resolve only to custom or
        registered objects and fkeras activations/ops; bytecode (`lambda`) is refused unless
        `safe_mode=False`, or safe mode is off (`fkeras.config.enable_unsafe_deserialization()`
        or `load_model(..., safe_mode=False)`)."""
        config = dict(config)
        for key in ("function", "output_shape", "mask"):
            value = config.get(key)
            if isinstance(value, dict) and value.get("class_name") in ("__lambda__", "function"):
                try:
                    config[key] = _deserialize_function(value, key, custom_objects, safe_mode)
                except TypeError as e:
                    raise TypeError(_WRAPPED.format(cls=cls, config=config, error=e)) from None
            elif isinstance(value, dict):
                raise ValueError(f"Invalid `{key}` for a Lambda layer: expected a function "
                                 f"entry (class_name 'function' or '__lambda__'). Received: "
                                 f"{value!r}")
        return cls(**config)

    @classmethod
    def _from_config_with_custom(cls, config, custom_objects):
        return cls.from_config(config, custom_objects)


def _parameters(fn):
    try:
        return inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}


def _is_shape_list(shape):
    """A list (or tuple) of shapes, as opposed to one shape (a tuple of ints/None)."""
    return isinstance(shape, (list, tuple)) and bool(shape) and \
        isinstance(shape[0], (list, tuple))


def _tuple_shapes(shape):
    if shape is None or callable(shape):
        return shape
    if _is_shape_list(shape):
        return [tuple(s) for s in shape]
    return tuple(shape)


def _shapes_of(inputs):
    if isinstance(inputs, (list, tuple)):
        return [tuple(t.shape) for t in inputs]
    return tuple(inputs.shape)


def _tensors(shapes):
    """KerasTensors for a shape or a list of shapes."""
    if _is_shape_list(shapes):
        return [KerasTensor(s) for s in shapes]
    return KerasTensor(shapes)


def _serialize_function(fn):
    """Keras 3's function entry: bytecode for a `lambda`, else a name that resolves on load
    (a public fkeras/Keras name for built-ins, the registered name for registered ones)."""
    if isinstance(fn, types.LambdaType) and fn.__name__ == "<lambda>":
        code = base64.b64encode(marshal.dumps(fn.__code__)).decode("ascii")
        closure = tuple(c.cell_contents for c in fn.__closure__) if fn.__closure__ else None
        return {"class_name": "__lambda__",
                "config": {"code": code, "defaults": fn.__defaults__, "closure": closure}}
    from fkeras.saving import object_registration, safe_resolve

    registered = object_registration.get_registered_name(fn) \
        if hasattr(fn, "__name__") else None
    if registered is not None and ">" in registered:
        return {"module": "builtins", "class_name": "function", "config": registered,
                "registered_name": "function"}
    for module, namespace in (("keras.activations", "activations"), ("keras.ops", "ops")):
        public = safe_resolve.public_name(namespace, fn)
        if public is not None:
            return {"module": module, "class_name": "function", "config": public,
                    "registered_name": None}
    return {"module": getattr(fn, "__module__", None), "class_name": "function",
            "config": getattr(fn, "__name__", str(fn)), "registered_name": None}


_WRAPPED = ("{cls} could not be deserialized properly. Please ensure that components that are "
            "Python object instances (layers, models, etc.) returned by `get_config()` are "
            "explicitly deserialized in the model's `from_config()` method.\n\nconfig={config}."
            "\n\nException encountered: {error}")


def _deserialize_function(entry, arg_name, custom_objects, safe_mode):
    from fkeras.saving import safe_resolve

    if entry["class_name"] == "function":
        return safe_resolve.resolve_function(entry, custom_objects, ("activations", "ops"))
    if safe_resolve.in_safe_mode(safe_mode):
        raise ValueError(
            "Requested the deserialization of a `Lambda` layer whose `" + arg_name + "` is a "
            "Python lambda. This carries a potential risk of arbitrary code execution and "
            "thus it is disallowed by default. If you trust the source of the artifact, you can "
            "override this error by passing `safe_mode=False` to the loading function, or "
            "calling `fkeras.config.enable_unsafe_deserialization()`.")
    cfg = entry.get("config")
    if not isinstance(cfg, dict) or not isinstance(cfg.get("code"), str):
        raise ValueError(f"Invalid serialized lambda for the `{arg_name}` of a Lambda layer: "
                         f"expected a dict with a base64 'code' string. Received: {cfg!r}")
    code = marshal.loads(base64.b64decode(cfg["code"]))
    import fkeras

    globs = {"fkeras": fkeras, "keras": fkeras, "ops": fkeras.ops, "np": np, "numpy": np}
    globs.update(custom_objects or {})
    closure = cfg.get("closure")
    cells = tuple(types.CellType(v) for v in closure) if closure else None
    defaults = tuple(cfg["defaults"]) if cfg.get("defaults") else None
    return types.FunctionType(code, globs, code.co_name, defaults, cells)
