"""Data for fit/evaluate/predict: NumPy arrays, lists, dicts keyed by input/output name, or an
iterable of batches, turned into flat lists of arrays in the model's input/output order.

Everything is checked against the model before any computation (fkeras is stricter than
Keras here, see ARCHITECTURE.md section 10): sample counts, ranks and fixed dimensions of x,
and y against each output for the compiled loss. The only reshapes allowed are a trailing
dimension of 1 added or removed (x (N, 28, 28) for Input(28, 28, 1), y (N,) for an (N, 1)
output), as every Keras generation allows.
"""

import math
import warnings

import numpy as np

from fkeras.backend import devices as _devices
from fkeras.engine.keras_tensor import KerasTensor
from fkeras.models.data_checks import fixed_input_dims
from fkeras.trainers import foreign_data
from fkeras.utils import nest


def unpack_x_y_sample_weight(data):
    """(x,), (x, y) or (x, y, sample_weight) -> x, y, sample_weight."""
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if len(data) == 1:
        return data[0], None, None
    if len(data) == 2:
        return data[0], data[1], None
    if len(data) == 3:
        return data
    raise ValueError(
        "Data is expected to be in format `x`, `(x,)`, `(x, y)`, or `(x, y, sample_weight)`, "
        f"found: {data}"
    )


def pack_x_y_sample_weight(x, y=None, sample_weight=None):
    """Keras 3's packing: x alone stays x (a tuple or list x is wrapped as `(x,)`)."""
    if y is None:
        return (x,) if isinstance(x, (tuple, list)) else x
    if sample_weight is None:
        return (x, y)
    return (x, y, sample_weight)


def to_array(a, widen_ints=True):
    """float -> float32 (C-contiguous), int/uint -> int64 (kept as given when not
    `widen_ints`: `check_inputs` casts model inputs once, to their input's dtype),
    bool -> float32."""
    if isinstance(a, KerasTensor):
        raise ValueError("Expected data (NumPy arrays), received a symbolic KerasTensor: "
                         f"{a}. Pass arrays to fit/evaluate/predict.")
    value = getattr(a, "_value", a)
    if type(value) in _devices._BUFFER_TYPES:  # an fkeras value on a non-host device
        a = value.to_host()
    if hasattr(a, "numpy") and not isinstance(a, np.ndarray):
        a = foreign_data.to_numpy(a)  # a torch tensor with grad or on a GPU, a tf tensor
        if not isinstance(a, np.ndarray):
            a = a.numpy()
    a = np.asarray(a)
    if a.dtype.kind == "f":
        return np.ascontiguousarray(a, dtype=np.float32)
    if a.dtype.kind in "iu":
        return a.astype(np.int64, copy=False) if widen_ints else a
    if a.dtype.kind == "b":
        return a.astype(np.float32) if widen_ints else a
    if _is_text(a):  # strings go as they are to the layers that take them (Input "string")
        return a
    raise ValueError(f"Unsupported data type {a.dtype} (expected numbers or strings).")


def _is_text(a):
    if a.dtype.kind in "US":
        return True
    return a.dtype.kind == "O" and (a.size == 0 or isinstance(a.flat[0], (str, bytes)))


def is_array_like(x):
    if x is None or isinstance(x, (np.ndarray, int, float)):
        return True
    if isinstance(x, dict):
        return all(is_array_like(v) for v in x.values())
    if isinstance(x, (list, tuple)):
        # A list of (x, y) tuples is an iterable of batches, not arrays.
        return not any(isinstance(item, tuple) for item in x)
    return hasattr(x, "__array__") or hasattr(x, "numpy")


_to_array = to_array


# ---- flattening by the model's structure ----

def _names(model, attr):
    try:
        return list(getattr(model, attr))
    except (AttributeError, TypeError):
        return None


def flatten_by_name(data, names, what, widen_ints=True):
    """A dict keyed by `names`, a list, or a single array -> flat list of arrays."""

    def to_array(a):
        return _to_array(a, widen_ints)

    if isinstance(data, dict):
        if names is None:
            return [to_array(v) for v in nest.flatten(data)]
        unknown = [k for k in data if k not in names]
        missing = [n for n in names if n not in data]
        if unknown or (missing and what == "input"):
            raise ValueError(
                f"Missing data for {what}(s) {missing} / unknown keys {unknown}. You passed a "
                f"data dictionary with keys {sorted(data)}. Expected the following keys: "
                f"{names}"
            )
        return [to_array(data[n]) if n in data else None for n in names]
    if isinstance(data, (list, tuple)):
        items = list(data)
        if items and all(np.ndim(i) == 0 and not isinstance(i, (list, tuple, np.ndarray))
                         for i in items):
            return [to_array(items)]  # a list of numbers is one array
        if names is not None and len(names) == 1 and len(items) != 1:
            # A list of rows for a single input (Keras 2 accepted `X.tolist()`).
            return [to_array(items)]
        return [to_array(i) if i is not None else None for i in items]
    return [to_array(data)]


def flatten_inputs(model, x):
    flat = flatten_by_name(x, _names(model, "input_names"), "input", widen_ints=False)
    inputs = getattr(model, "_flat_inputs", None)
    if inputs is not None and len(flat) != len(inputs):
        raise ValueError(
            f'Model "{model.name}" expects {len(inputs)} input(s), but it received '
            f"{len(flat)} input arrays. Expected inputs: {_names(model, 'input_names')}."
        )
    return flat


def flatten_targets(model, y):
    if y is None:
        return None
    flat = flatten_by_name(y, _names(model, "output_names"), "output")
    outputs = getattr(model, "_flat_outputs", None)
    if outputs is not None and len(flat) != len(outputs):
        flat = _targets_for_losses(model, flat, len(outputs))
    if outputs is not None and len(flat) != len(outputs):
        raise ValueError(
            f'Model "{model.name}" has {len(outputs)} output(s) '
            f"{_names(model, 'output_names')}, but {len(flat)} target arrays were passed."
        )
    return flat


def _targets_for_losses(model, flat, n_outputs):
    """Keras 3: with a list `loss` holding None for some outputs, targets given only for the
    outputs with a loss go to those outputs (the others get None)."""
    spec = getattr(getattr(model, "compiled_loss", None), "_loss_spec", None)
    if not isinstance(spec, (list, tuple)) or len(spec) != n_outputs:
        return flat
    if sum(loss is not None for loss in spec) != len(flat):
        return flat
    targets = iter(flat)
    return [None if loss is None else next(targets) for loss in spec]


def flatten_sample_weight(model, sample_weight, n_outputs):
    if sample_weight is None:
        return None
    if isinstance(sample_weight, (dict, list, tuple)) and not (
            isinstance(sample_weight, (list, tuple)) and np.ndim(sample_weight[0]) == 0):
        flat = flatten_by_name(sample_weight, _names(model, "output_names"), "output")
        flat = [None if w is None else w.astype(np.float32) for w in flat]
        if len(flat) != n_outputs:
            raise ValueError(f"`sample_weight` has {len(flat)} entries for {n_outputs} "
                             "outputs.")
        return flat
    w = np.asarray(sample_weight, dtype=np.float32)
    return [w] * n_outputs


# ---- checks (before any computation) ----

def _fit_trailing_one(a, want):
    """Adds or removes one trailing dimension of 1 when that makes the ranks agree."""
    if a.ndim == len(want) + 1 and a.shape[-1] == 1:
        return a.reshape(a.shape[:-1])
    if a.ndim + 1 == len(want) and want[-1] == 1 and a.ndim >= 1:
        return a.reshape(a.shape + (1,))
    return a


def check_inputs(model, xs, check_shapes=True):
    """Fits trailing 1s, casts to the input's dtype and checks every input array against its
    model input (a model without known inputs gets int/bool arrays as int64/float32).
    `check_shapes=False` (data for a user-written step) converts the arrays only."""
    inputs = getattr(model, "_flat_inputs", None)
    if inputs is None or not check_shapes:
        return [a if a is None else to_array(a) for a in xs]
    out = []
    for t, a in zip(inputs, xs):
        name = t._keras_history.layer.name
        want = t.shape
        a = cast_to_input_dtype(a, t.dtype, name)
        a = _fit_trailing_one(a, want)
        if a.ndim != len(want):
            raise ValueError(
                f"Error when checking input: expected {name} to have {len(want)} dimensions, "
                f"but got array with shape {a.shape}. The model expects inputs of shape "
                f"{want} (None is the batch dimension)."
            )
        differs = any(w is not None and w != g for w, g in zip(want[1:], a.shape[1:]))
        if differs and fixed_input_dims(model):
            raise ValueError(
                f"Error when checking input: expected {name} to have shape "
                f"{tuple(want[1:])} but got array with shape {a.shape[1:]} (full shapes: "
                f"expected {want}, received {a.shape})."
            )
        if differs and len(inputs) == 1:
            # A Sequential model takes other dims where its layers do: its layers' own checks
            # run once on a symbolic input of that shape (nothing recorded, no kernel run).
            model.compute_output_spec(KerasTensor((None,) + a.shape[1:], t.dtype))
        out.append(a)
    return out


def cast_to_input_dtype(a, dtype, name):
    """Data for a model input of `dtype`, converted once (Keras 3 converts a Functional
    model's inputs to their Input's dtype): int/bool -> float32 for a float input (MNIST-style
    uint8 images), ints -> int64 for an integer input (indices for an Embedding); float data
    for an integer input must hold whole numbers (Keras would truncate 1.5 to 1 silently)."""
    try:
        kind = np.dtype(dtype).kind
    except TypeError:  # not a NumPy dtype name (a policy such as "mixed_float16")
        kind = "f"
    if kind == "f":
        if a.dtype.kind in "iub":
            return a.astype(np.float32)
        return a
    if kind in "iu":
        if a.dtype.kind == "f":
            whole = np.isfinite(a).all() and np.array_equal(a, np.trunc(a))
            if not whole:
                raise ValueError(
                    f"Error when checking input: {name} has dtype {dtype} (integer), but "
                    f"received float data of dtype {a.dtype} with values that are not whole "
                    "numbers. Pass integers (e.g. class or token indices)."
                )
        return a.astype(np.int64, copy=False)
    return a


def check_targets(model, ys, kinds, xs=None):
    """Checks y against each output; kinds[i] is 'sparse', 'same' or None (unknown loss).
    `xs` (the checked inputs) give a Sequential model's output shapes for inputs whose dims
    differ from its Input's."""
    outputs = getattr(model, "_flat_outputs", None)
    if outputs is None or ys is None:
        return ys
    names = _names(model, "output_names")
    out = []
    for i, (want, a) in enumerate(zip(_output_shapes(model, xs), ys)):
        kind = kinds[i] if i < len(kinds) else None
        if a is None or kind is None:
            out.append(a)
            continue
        if kind == "sparse":
            if a.ndim == len(want) and a.shape[-1] == 1:
                a = a.reshape(a.shape[:-1])
            ok = a.ndim == len(want) - 1 and all(
                w is None or w == g for w, g in zip(want[1:-1], a.shape[1:]))
            expected = want[:-1]
        else:
            a = _fit_trailing_one(a, want)
            ok = a.ndim == len(want) and all(
                w is None or w == g for w, g in zip(want[1:], a.shape[1:]))
            expected = want
        if not ok:
            raise ValueError(_target_message(names[i], expected, a.shape, kind, want))
        out.append(a)
    return out


def _output_shapes(model, xs):
    shapes = [t.shape for t in model._flat_outputs]
    inputs = model._flat_inputs
    if xs is None or fixed_input_dims(model) or len(inputs) != 1 or xs[0] is None:
        return shapes
    t, a = inputs[0], xs[0]
    if all(w is None or w == g for w, g in zip(t.shape[1:], a.shape[1:])):
        return shapes
    spec = model.compute_output_spec(KerasTensor((None,) + a.shape[1:], t.dtype))
    return [s.shape for s in nest.flatten(spec)]


def _target_message(name, expected, got, kind, output_shape):
    msg = (f"Error when checking target: expected {name} to have shape {tuple(expected)} but "
           f"got array with shape {tuple(got)} (output {name} has shape {output_shape}).")
    if kind == "categorical" and len(got) >= 1 and (len(got) == 1 or got[-1] == 1):
        msg += (" `categorical_crossentropy` expects one-hot targets of shape "
                "(samples, classes). If your targets are integer classes, convert them with "
                "`fkeras.utils.to_categorical` or use the loss "
                "`sparse_categorical_crossentropy`, which expects integer targets.")
    if kind == "sparse":
        msg += (" `sparse_categorical_crossentropy` expects integer class labels, one per "
                "sample; for one-hot targets use `categorical_crossentropy`.")
    return msg


def num_samples(*flat_lists):
    sizes = {}
    for label, arrays in zip(("x", "y", "sample_weight"), flat_lists):
        for a in arrays or []:
            if a is not None:
                if a.ndim == 0:
                    raise ValueError(f"Expected arrays with a batch dimension, received a "
                                     f"scalar for `{label}`.")
                sizes.setdefault(label, []).append(len(a))
    all_sizes = {s for v in sizes.values() for s in v}
    if len(all_sizes) > 1:
        detail = "\n".join(f"  '{k}' sizes: {', '.join(map(str, v))}" for k, v in sizes.items())
        raise ValueError(
            "Data cardinality is ambiguous. Make sure all arrays contain the same number of "
            f"samples.\n{detail}"
        )
    return all_sizes.pop() if all_sizes else 0


def class_weights_to_sample_weight(y, class_weight):
    """Per-sample weights from {class: weight}; the class is argmax of one-hot y, else the
    rounded label. Classes absent from the dict weigh 1.0 (Keras 3)."""
    if y.ndim > 2:
        raise ValueError("`class_weight` not supported for 3+ dimensional targets.")
    if y.ndim == 2 and y.shape[1] > 1:
        labels = np.argmax(y, axis=1)
    else:
        labels = np.round(y.reshape(len(y))).astype(np.int64)
    table = np.ones(int(max(max(class_weight, default=0), labels.max(initial=0))) + 1,
                    dtype=np.float32)
    for k, v in class_weight.items():
        table[int(k)] = v
    # A negative label is in no class index: it weighs 1.0 (never wraps to the last class).
    return np.where(labels >= 0, table[np.maximum(labels, 0)], np.float32(1.0))


class ArrayDataset:
    """Flat lists of arrays (x per input, y per output, sample weight per output)."""

    def __init__(self, xs, ys=None, sws=None):
        self.xs, self.ys, self.sws = xs, ys, sws
        self.n = num_samples(xs, ys, sws)

    def take(self, start, stop):
        def cut(lst):
            return None if lst is None else [None if a is None else a[start:stop] for a in lst]

        return ArrayDataset(cut(self.xs), cut(self.ys), cut(self.sws))

    def split(self, validation_split):
        """(train, validation): the last fraction, before any shuffling (Keras)."""
        split_at = int(math.floor(self.n * (1.0 - validation_split)))
        if split_at == 0 or split_at == self.n:
            raise ValueError(
                f"Training data contains {self.n} samples, which is not sufficient to split "
                "it into a validation and training set as specified by "
                f"`validation_split={validation_split}`. Either provide more data, or a "
                "different value for the `validation_split` argument."
            )
        return self.take(0, split_at), self.take(split_at, self.n)

    def num_batches(self, batch_size):
        return int(math.ceil(self.n / batch_size)) if self.n else 0

    def batches(self, batch_size, shuffle=False, rng=None):
        """Yields (xs, ys, sws) batches; shuffling gathers each array once per epoch so the
        batches are contiguous views."""
        data = self
        order = None
        if shuffle == "batch":
            order = rng.permutation(self.num_batches(batch_size))
        elif shuffle:
            perm = rng.permutation(self.n)
            data = ArrayDataset(*[None if lst is None else
                                  [None if a is None else a[perm] for a in lst]
                                  for lst in (self.xs, self.ys, self.sws)])
        starts = range(0, self.n, batch_size)
        if order is not None:
            starts = [i * batch_size for i in order]
        xs, ys, sws = data.xs, data.ys, data.sws
        for start in starts:
            stop = start + batch_size
            yield ([a[start:stop] for a in xs],
                   None if ys is None else [None if a is None else a[start:stop] for a in ys],
                   None if sws is None else [None if a is None else a[start:stop] for a in sws])


class IterableDataset:
    """An iterable of batches `x`, `(x, y)` or `(x, y, sample_weight)` (a generator, a
    `fkeras.utils.PyDataset`-like sequence, or any re-iterable)."""

    def __init__(self, data):
        self.data = data
        self._iterator = None

    def num_batches(self, batch_size=None):
        try:
            return len(self.data)
        except TypeError:
            return None

    def iterator(self, persistent=False):
        if persistent:
            if self._iterator is None:
                self._iterator = iter(self.data)
            return self._iterator
        return iter(self.data)

    def reset_persistent(self):
        self._iterator = None


def ran_out_of_data_warning(steps):
    warnings.warn(
        "Your input ran out of data; interrupting training. Make sure that your dataset or "
        f"generator can generate at least `steps_per_epoch * epochs` batches ({steps} "
        "steps). You may need to use the `.repeat()` function when building your dataset.",
        stacklevel=3,
    )
