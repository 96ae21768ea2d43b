"""Argument checks shared by ZeroPadding*, Cropping* and UpSampling* (Keras 3's texts)."""

import numpy as np

_ORDINALS = ("1st", "2nd", "3rd")


def nonneg_tuple(value, n, name):
    """An int or n ints (each >= 0) as an n-tuple (Keras's standardize_tuple, allow_zero)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        out = (int(value),) * n
    else:
        try:
            out = tuple(value)
        except TypeError:
            out = ()
        if len(out) != n or not all(isinstance(v, (int, np.integer)) and
                                    not isinstance(v, bool) for v in out):
            raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. "
                             f"Received {name}={value}")
        out = tuple(int(v) for v in out)
    if min(out) < 0:
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. Received "
                         f"{name}={value}, including values that do not satisfy `value >= 0`")
    return out


def pair_per_axis(value, rank, name, verb):
    """((before, after),) * rank from an int, rank ints, or rank pairs (ZeroPadding2D/3D,
    Cropping2D/3D)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"`{name}` cannot be negative. Received: {name}={value}.")
        return ((int(value), int(value)),) * rank
    if hasattr(value, "__len__"):
        if len(value) != rank:
            raise ValueError(f"`{name}` should have {'two' if rank == 2 else rank} elements. "
                             f"Received: {name}={value}.")
        return tuple(nonneg_tuple(v, 2, f"{_ORDINALS[i]} entry of {name}")
                     for i, v in enumerate(value))
    raise ValueError(f"`{name}` should be either an int, a tuple of {rank} ints or a tuple of "
                     f"{rank} tuples of 2 ints (one (before, after) pair to {verb} per spatial "
                     f"dimension). Received: {name}={value}.")


def spatial_axes(rank, data_format):
    start = 2 if data_format == "channels_first" else 1
    return tuple(range(start, start + rank))
