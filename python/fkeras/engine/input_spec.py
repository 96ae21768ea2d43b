"""InputSpec: what a layer accepts (ndim, min/max ndim, fixed axes), checked on every call."""


class InputSpec:
    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None,
                 axes=None, allow_last_axis_squeeze=False, name=None):
        self.dtype = dtype
        self.shape = tuple(shape) if shape is not None else None
        self.ndim = len(self.shape) if self.shape is not None else ndim
        self.max_ndim = max_ndim
        self.min_ndim = min_ndim
        self.axes = {int(k): v for k, v in (axes or {}).items()}
        self.name = name

    def __repr__(self):
        parts = [f"{k}={v}" for k, v in (("dtype", self.dtype), ("shape", self.shape),
                                         ("ndim", self.ndim), ("max_ndim", self.max_ndim),
                                         ("min_ndim", self.min_ndim), ("axes", self.axes or None))
                 if v is not None]
        return f"InputSpec({', '.join(parts)})"


def check_input_spec(specs, shapes, layer_name):
    """Raises ValueError (Keras 2 wording) if an input shape breaks its spec."""
    if specs is None:
        return
    if not isinstance(specs, (list, tuple)):
        specs = [specs]
    if len(specs) != len(shapes):
        raise ValueError(
            f'Layer "{layer_name}" expects {len(specs)} input(s), but it received '
            f"{len(shapes)} input tensors."
        )
    for i, (spec, shape) in enumerate(zip(specs, shapes)):
        if spec is None:
            continue
        ndim = len(shape)
        head = f'Input {i} of layer "{layer_name}" is incompatible with the layer: '
        if spec.ndim is not None and ndim != spec.ndim:
            raise ValueError(f"{head}expected ndim={spec.ndim}, found ndim={ndim}. "
                             f"Full shape received: {tuple(shape)}")
        if spec.max_ndim is not None and ndim > spec.max_ndim:
            raise ValueError(f"{head}expected max_ndim={spec.max_ndim}, found ndim={ndim}. "
                             f"Full shape received: {tuple(shape)}")
        if spec.min_ndim is not None and ndim < spec.min_ndim:
            raise ValueError(f"{head}expected min_ndim={spec.min_ndim}, found ndim={ndim}. "
                             f"Full shape received: {tuple(shape)}")
        for axis, value in spec.axes.items():
            if value is None:
                continue
            if -ndim <= axis < ndim and shape[axis] not in (None, value):
                raise ValueError(f"{head}expected axis {axis} of input shape to have value "
                                 f"{value}, but received input with shape {tuple(shape)}")
        if spec.shape is not None:
            for want, got in zip(spec.shape, shape):
                if want is not None and got is not None and want != got:
                    raise ValueError(f"{head}expected shape={spec.shape}, found "
                                     f"shape={tuple(shape)}")
