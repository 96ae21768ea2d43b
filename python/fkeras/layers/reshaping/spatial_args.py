"""Argument checks shared by ZeroPadding*, Cropping* and UpSampling* (Keras 3's texts)."""

import numpy as np

_ORDINALS = ("1st", "2nd", "3rd")


def standardize_tuple(value, n, name, allow_zero=False):
    """An int or n ints as an n-tuple of ints > 0 (>= 0 with allow_zero), with Keras 3's
    error texts (keras.src.utils.argument_validation.standardize_tuple)."""
    message = f"The `{name}` argument must be a tuple of {n} integers. Received {name}={value}"
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        out = (int(value),) * n
    else:
        try:
            out = tuple(value)
        except TypeError:
            raise ValueError(message) from None
        if len(out) != n:
            raise ValueError(message)
        for v in out:
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ValueError(f"{message}including element {v} of type {type(v)}")
        out = tuple(int(v) for v in out)
    bad = {v for v in out if (v < 0 if allow_zero else v <= 0)}
    if bad:
        raise ValueError(f"{message}, including values {bad} that do not satisfy "
                         f"`value {'>= 0' if allow_zero else '> 0'}`")
    return out


def nonneg_tuple(value, n, name):
    """standardize_tuple with zeros allowed (padding and cropping amounts)."""
    return standardize_tuple(value, n, name, allow_zero=True)


def pair_per_axis(value, rank, name, verb):
    """((before, after),) * rank from an int, rank ints, or rank pairs (ZeroPadding2D/3D,
    Cropping2D/3D)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"`{name}` cannot be negative. Received: {name}={value}.")
        return ((int(value), int(value)),) * rank
    if hasattr(value, "__len__") and not isinstance(value, str):
        if len(value) != rank:
            if rank == 2:
                raise ValueError(f"`{name}` should have two elements. Received: "
                                 f"{name}={value}.")
            raise ValueError(f"`{name}` should have {rank} elements. Received: {value}.")
        return tuple(nonneg_tuple(v, 2, f"{_ORDINALS[i]} entry of {name}")
                     for i, v in enumerate(value))
    if isinstance(value, str) and rank == 3:
        raise ValueError(f"`{name}` should have 3 elements. Received: {value}.")
    raise ValueError(f"`{name}` should be either an int, a tuple of {rank} ints or a tuple of "
                     f"{rank} tuples of 2 ints (one (before, after) pair to {verb} per spatial "
                     f"dimension). Received: {name}={value}.")


def spatial_axes(rank, data_format):
    start = 2 if data_format == "channels_first" else 1
    return tuple(range(start, start + rank))
