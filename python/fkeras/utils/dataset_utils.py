"""`split_dataset` (Keras's `keras.utils.split_dataset`) for in-memory data."""

import random

import numpy as np

from fkeras.utils import nest


def _sizes(left_size, right_size, total):
    """Keras's rules: an int is a count, a float a fraction (rounded); None the rest."""
    for name, value in (("left_size", left_size), ("right_size", right_size)):
        if value is not None and type(value) not in (int, float):
            raise TypeError(f"Invalid `{name}` Type. Expected: int or float or None, "
                            f"Received: type({name})={type(value)}.")
    if left_size is None and right_size is None:
        raise ValueError("At least one of the `left_size` or `right_size` must be specified. "
                         "Received: left_size=None and right_size=None")
    if left_size == 0 and right_size == 0:
        raise ValueError("Both `left_size` and `right_size` are zero. At least one of the "
                         "split sizes must be non-zero.")
    for name, value in (("left_size", left_size), ("right_size", right_size)):
        bad = (isinstance(value, int) and not 0 < value < total) or (
            isinstance(value, float) and not 0 < value < 1)
        if bad:
            raise ValueError(f"`{name}` should be either a positive integer smaller than "
                             f"{total}, or a float within the range `[0, 1]`. Received: "
                             f"{name}={value}")
    if isinstance(left_size, float) and isinstance(right_size, float) and (
            left_size + right_size > 1):
        raise ValueError("The sum of `left_size` and `right_size` is greater than 1. It must "
                         "be less than or equal to 1.")
    left = round(left_size * total) if isinstance(left_size, float) else left_size
    right = round(right_size * total) if isinstance(right_size, float) else right_size
    left = total - right if left is None else left
    right = total - left if right is None else right
    if left + right > total:
        raise ValueError(f"The sum of `left_size` and `right_size` should be smaller than the "
                         f"{total}. Received: left_size + right_size = {left + right}and "
                         f"total_length = {total}")
    for size, side in ((left, "left"), (right, "right")):
        if size == 0:
            raise ValueError(f"With `dataset` of length={total}, `left_size`={left} and "
                             f"`right_size`={right}.Resulting {side} side dataset split will "
                             "be empty. Adjust any of the aforementioned parameters")
    return int(left), int(right)


def _as_arrays(dataset):
    """The dataset as a structure of arrays with a common first axis."""
    if isinstance(dataset, (np.ndarray, list, tuple, dict)) or hasattr(dataset, "__array__"):
        structure = dataset if isinstance(dataset, (list, tuple, dict)) else np.asarray(dataset)
        if isinstance(dataset, list) and dataset and np.ndim(dataset[0]) == 0:
            structure = np.asarray(dataset)
        flat = [np.asarray(a) for a in nest.flatten(structure)]
        lengths = {len(a) for a in flat}
        if len(lengths) != 1:
            raise ValueError(f"Length mismatch of the arrays in `dataset`: {sorted(lengths)}.")
        return structure, flat
    if hasattr(dataset, "__len__") and hasattr(dataset, "__getitem__"):
        samples = [dataset[i] for i in range(len(dataset))]  # a map-style dataset (torch)
        first = samples[0]
        columns = list(zip(*samples)) if isinstance(first, (tuple, list)) else [samples]
        flat = [np.stack([np.asarray(v) for v in col]) for col in columns]
        return (tuple(flat) if isinstance(first, (tuple, list)) else flat[0]), flat
    raise TypeError("The `dataset` argument must be a NumPy array, a list/tuple/dict of "
                    "arrays with the same length, or a map-style dataset (`__len__` and "
                    f"`__getitem__`). Received: dataset={dataset!r:.80} of type "
                    f"{type(dataset)}")


def split_dataset(dataset, left_size=None, right_size=None, shuffle=False, seed=None,
                  preferred_backend=None):
    """Splits in-memory data into a left and a right part (e.g. train / test).

    The samples are shuffled as Keras's TensorFlow path shuffles them (Python's `random`
    seeded with `seed`, then `random.shuffle`), so a seed gives Keras's split; the left part
    is the first `left_size` samples, the right part the last `right_size`.

    Args:
        dataset: a NumPy array, a list/tuple/dict of arrays of the same length, or a
            map-style dataset (`__len__` and `__getitem__` returning samples).
        left_size: int (a count) or float in (0, 1) (a fraction) of the left part; None:
            the complement of `right_size`.
        right_size: the same for the right part.
        shuffle: whether to shuffle before splitting.
        seed: the shuffle seed.
        preferred_backend: accepted for Keras's code (fkeras returns arrays).

    Returns:
        (left, right), each in the structure of `dataset` (arrays sliced along axis 0; a
        map-style dataset gives a tuple of stacked arrays), ready for `fit(x, y)`.
    """
    structure, flat = _as_arrays(dataset)
    total = len(flat[0])
    order = list(range(total))
    if shuffle:
        if seed is None:
            seed = random.randint(0, int(1e6))
        rng = random.Random(seed)
        rng.shuffle(order)
    left, right = _sizes(left_size, right_size, total)
    order = np.asarray(order, dtype=np.int64)

    def take(index):
        parts = [a[index] for a in flat]
        return nest.pack_like(structure, parts) if not isinstance(structure, np.ndarray) \
            else parts[0]

    return take(order[:left]), take(order[total - right:])
