"""Subclassed models (`class MyModel(fkeras.Model)` with its own `call`): config and build.

Config (Keras 3's auto-config): a subclassed model whose class does not override
`get_config` is described by its constructor arguments, recorded when it is created, when
they are all plain values (str, int, float, bool, None, or lists/tuples/dicts of them), plus
the base config (`name`, `trainable`, `dtype`), each base key kept only when `__init__` takes
it by name or through `**kwargs`, so the config always fits the constructor. Loading calls
`cls(**config)`. A model created with other values (a layer, an array), or with `*args` /
positional-only arguments, must override `get_config` (and `from_config` when its arguments
are objects): `get_config()` raises Keras's NotImplementedError then. Keras 3.15 records
only the constructor's *default* values for a Model subclass (its `Model.__new__` drops the
arguments), so `MyModel(units=3)` is written as the default; fkeras records the arguments
actually passed (a file it writes reloads in Keras with the right values).

Build: `get_build_config()` is `{"input_shape": <shape of the first build>}`;
`build_from_config` calls the model's own `build` when it defines one, else runs `call` on
symbolic inputs of that shape (which builds every sub-layer), as Keras 3 does; when `call`
cannot run symbolically fkeras calls it once on zeros of that shape (Keras warns instead).
"""

import inspect
import warnings

_PLAIN = (str, int, float, bool, type(None))

_EXAMPLE = """
class MyModel(fkeras.Model):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.dense = fkeras.layers.Dense(units)

    def get_config(self):
        config = super().get_config()
        config.update({"units": self.units})
        return config
"""


def _plain(value, depth=0):
    if isinstance(value, _PLAIN):
        return True
    if depth > 32:
        return False
    if isinstance(value, (list, tuple)):
        return all(_plain(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v, depth + 1) for k, v in value.items())
    return False


def record_init_args(instance, cls, args, kwargs):
    """Sets `instance._fk_auto_config` to the constructor arguments as a config dict, or to
    "args" (positional-only or `*args` given) / "values" (arguments that are not plain
    values, or that do not bind)."""
    try:
        signature = inspect.signature(cls.__init__)
        bound = signature.bind(None, *args, **kwargs)
    except (TypeError, ValueError):
        instance.__dict__["_fk_auto_config"] = "values"
        return
    params = list(signature.parameters.values())
    if any(p.kind == p.POSITIONAL_ONLY for p in params[1:]):
        instance.__dict__["_fk_auto_config"] = "args"
        return
    bound.apply_defaults()
    config = {}
    for p in params[1:]:
        value = bound.arguments.get(p.name)
        if p.kind == p.VAR_POSITIONAL:
            if value:
                instance.__dict__["_fk_auto_config"] = "args"
                return
        elif p.kind == p.VAR_KEYWORD:
            config.update(value or {})
        else:
            config[p.name] = value
    config.pop("name", None)
    instance.__dict__["_fk_auto_config"] = config if _plain(config) else "values"


def auto_config(model, base):
    """The config of a subclassed model that does not override `get_config`: `base` (the
    Layer config) merged with the recorded constructor arguments.

    Raises:
        NotImplementedError: the model was created with arguments that are not plain values,
            or with positional-only / `*args` arguments (Keras 3's messages).
    """
    recorded = model.__dict__.get("_fk_auto_config")
    if not isinstance(recorded, dict):
        name = type(model).__name__
        if recorded == "args":
            reason = ("was created by passing positional only or variadic positional "
                      "arguments (e.g., `*args`) to `__init__()`, which is not supported by "
                      "the automatic config generation. Please remove all positional only "
                      "and variadic arguments from `__init__()` or override `get_config()` "
                      "and `from_config()` to make the object serializable.")
        else:
            reason = ("was created by passing non-serializable argument values in "
                      "`__init__()`, and therefore the object must override `get_config()` "
                      "in order to be serializable. Please implement `get_config()`.")
        raise NotImplementedError(f"Object {name} {reason}\n\nExample:\n{_EXAMPLE}")
    params = inspect.signature(type(model).__init__).parameters
    takes_any = any(p.kind == p.VAR_KEYWORD for p in params.values())
    config = {"name": base["name"]} if "name" in params or takes_any else {}
    config.update(recorded)
    config.update({k: v for k, v in base.items()
                   if k != "name" and (k in params or takes_any)})
    return config


def _is_shape(value):
    return isinstance(value, (list, tuple)) and all(
        v is None or isinstance(v, int) and not isinstance(v, bool) for v in value)


def to_shapes(structure):
    """JSON lists that are shapes as tuples, in any nesting of lists/dicts."""
    if _is_shape(structure):
        return tuple(structure)
    if isinstance(structure, dict):
        return {k: to_shapes(v) for k, v in structure.items()}
    if isinstance(structure, (list, tuple)):
        return [to_shapes(v) for v in structure]
    return structure


MAX_DIM = 2**31 - 1   # a recorded dimension (batch included)
MAX_SHAPES = 1024     # inputs in one build config


def check_build_shapes(structure, what="input_shape"):
    """Refuses a build config whose shapes are not nested lists of non-negative ints/None
    below MAX_DIM (a file must not make the loader build from arbitrary values).

    Raises:
        ValueError: naming the offending value.
    """
    count = [0]

    def check(value, depth):
        if depth > 16:
            raise ValueError(f"Invalid build config: `{what}` is nested too deeply.")
        if isinstance(value, dict):
            for v in value.values():
                check(v, depth + 1)
            return
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"Invalid build config: `{what}` must hold shapes (lists of "
                             f"ints or None). Received: {value!r}")
        if _is_shape(value):
            count[0] += 1
            if count[0] > MAX_SHAPES or any(d is not None and not 0 <= d <= MAX_DIM
                                            for d in value):
                raise ValueError(f"Invalid build config: `{what}` holds the shape "
                                 f"{list(value)}; expected at most {MAX_SHAPES} shapes with "
                                 f"dimensions between 0 and {MAX_DIM} (or None).")
            return
        for v in value:
            check(v, depth + 1)

    check(structure, 0)


def _symbolic_inputs(shapes):
    from fkeras.engine.keras_tensor import KerasTensor

    if _is_shape(shapes):
        return KerasTensor(tuple(shapes))
    if isinstance(shapes, dict):
        return {k: _symbolic_inputs(v) for k, v in shapes.items()}
    if isinstance(shapes, (list, tuple)):
        return [_symbolic_inputs(v) for v in shapes]
    raise ValueError(f"Invalid input shape in build config: {shapes!r}")


EAGER_BUILD_LIMIT = 2**22  # elements of zeros an eager fallback build may feed


def _eager_build(model, shapes):
    """fkeras's fallback when `call` cannot run on symbolic inputs (an op or a Python
    branch that needs values): one inference call on zeros of the recorded shape (None
    dimensions as 1), when that is at most EAGER_BUILD_LIMIT elements. Returns success."""
    import numpy as np

    def zeros(s):
        if _is_shape(s):
            s = tuple(1 if d is None else d for d in s)
            return np.zeros(s, "float32")
        if isinstance(s, dict):
            return {k: zeros(v) for k, v in s.items()}
        return [zeros(v) for v in s]

    try:
        inputs = zeros(shapes)
        from fkeras.utils import nest

        if sum(int(np.size(a)) for a in nest.flatten(inputs)) > EAGER_BUILD_LIMIT:
            return False
        model(inputs)
        return True
    except Exception:
        return False


def defines_build(model):
    """Whether the model's class (below Model) defines its own `build`."""
    from fkeras.models.model import Model

    for klass in type(model).__mro__:
        if klass is Model:
            return False
        if "build" in vars(klass):
            return True
    return False


def build_from_config(model, config):
    """Builds a subclassed model from `{"input_shape": ...}` / `{"shapes_dict": ...}`: its
    own `build` when it has one, else a symbolic call of `call` on inputs of that shape.
    Warns (Keras 3's warning) when neither works."""
    from fkeras.ops.registry import symbolic_call_scope

    if not config or not isinstance(config, dict):
        return
    ok = False
    for key in ("input_shape", "shapes_dict"):
        if key in config:
            check_build_shapes(config[key], key)
    if "input_shape" in config:
        shape = to_shapes(config["input_shape"])
        try:
            if defines_build(model):
                model.build(shape)
            else:
                with symbolic_call_scope():
                    model(_symbolic_inputs(shape))
            ok = True
        except Exception:  # Keras: a model that cannot be built this way warns
            ok = not defines_build(model) and _eager_build(model, shape)
        model._fk_record_build_shape(shape)
    elif "shapes_dict" in config and isinstance(config["shapes_dict"], dict):
        shapes = {k: to_shapes(v) for k, v in config["shapes_dict"].items()}
        try:
            if defines_build(model):
                model.build(**shapes)
            else:
                with symbolic_call_scope():
                    model(**{k.removesuffix("_shape"): _symbolic_inputs(v)
                             for k, v in shapes.items()})
            ok = True
        except Exception:
            ok = False
    if ok:
        model.built = True
        return
    warnings.warn(
        f"Model '{model.name}' had a build config, but the model cannot be built "
        "automatically in `build_from_config(config)`. You should implement "
        "`def build_from_config(self, config)`, and you might also want to implement the "
        "method that generates the config at saving time, `def get_build_config(self)`. The "
        "method `build_from_config()` is meant to create the state of the model (i.e. its "
        "variables) upon deserialization.", stacklevel=2)
