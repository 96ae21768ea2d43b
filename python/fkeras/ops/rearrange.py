"""keras.ops.rearrange: einops-style axis rearrangement ("b h w c -> b (h w) c"), composed of
reshape and transpose ops (so it is differentiable and works on KerasTensors).

Patterns hold named axes and parenthesized groups of named axes on both sides (Keras 3's
subset of einops: no ellipsis, no anonymous axes). A group on the input side is split using
the sizes given as keyword arguments (one size of a group may be inferred).
"""

import math
import re

from fkeras.ops import reshape_ops as _r

_TOKEN = re.compile(r"\(([^()]*)\)|(\w+)|(\S)")


def _parse(side, pattern):
    groups = []
    for m in _TOKEN.finditer(side):
        if m.group(3):
            raise ValueError(f"rearrange: unexpected character {m.group(3)!r} in pattern "
                             f"{pattern!r}. Patterns hold names and (grouped names).")
        names = m.group(1).split() if m.group(1) is not None else [m.group(2)]
        if not names:
            raise ValueError(f"rearrange: empty group '()' in pattern {pattern!r}.")
        groups.append(names)
    flat = [a for g in groups for a in g]
    if len(set(flat)) != len(flat):
        raise ValueError(f"rearrange: an axis name repeats in {side.strip()!r} "
                         f"(pattern {pattern!r}).")
    return groups, flat


def rearrange(tensor, pattern, **axes_lengths):
    """Rearranges the axes of `tensor` by an einops-style `pattern`.

    Example:
    ```python
    y = fkeras.ops.rearrange(x, "b (h p) w -> b h (p w)", p=2)
    ```
    """
    if not isinstance(pattern, str) or pattern.count("->") != 1:
        raise ValueError(f"rearrange: the pattern must read 'inputs -> outputs'. Received: "
                         f"pattern={pattern!r}")
    left, right = pattern.split("->")
    in_groups, in_flat = _parse(left, pattern)
    out_groups, out_flat = _parse(right, pattern)
    if sorted(in_flat) != sorted(out_flat):
        raise ValueError(f"rearrange: both sides must name the same axes. Received: "
                         f"pattern={pattern!r} (inputs {sorted(in_flat)}, outputs "
                         f"{sorted(out_flat)})")
    unknown = set(axes_lengths) - set(in_flat)
    if unknown:
        raise ValueError(f"rearrange: sizes given for axes not in the pattern: "
                         f"{sorted(unknown)}")
    shape = tuple(tensor.shape)
    if len(shape) != len(in_groups):
        raise ValueError(f"rearrange: the input side names {len(in_groups)} axes but the "
                         f"tensor has rank {len(shape)} (shape {shape}).")
    sizes = {}
    for group, dim in zip(in_groups, shape):
        if len(group) == 1:
            name = group[0]
            if name in axes_lengths and dim is not None and axes_lengths[name] != dim:
                raise ValueError(f"rearrange: axis '{name}' has size {dim}, but "
                                 f"{name}={axes_lengths[name]} was given.")
            sizes[name] = dim
            continue
        missing = [a for a in group if a not in axes_lengths]
        if len(missing) > 1:
            raise ValueError(f"rearrange: cannot infer the sizes of {missing} in group "
                             f"({' '.join(group)}): give all but one as keyword arguments.")
        known = math.prod(axes_lengths[a] for a in group if a in axes_lengths)
        for a in group:
            sizes[a] = axes_lengths.get(a)
        if missing:
            if dim is not None and dim % known:
                raise ValueError(f"rearrange: group ({' '.join(group)}) of size {dim} is not "
                                 f"divisible by {known}.")
            sizes[missing[0]] = None if dim is None else dim // known
        elif dim is not None and known != dim:
            raise ValueError(f"rearrange: group ({' '.join(group)}) has size {dim}, but the "
                             f"given sizes multiply to {known}.")
    split = [sizes[a] for a in in_flat]
    x = tensor
    if len(split) != len(shape):
        x = _r.reshape(x, tuple(-1 if s is None else s for s in split))
    order = [in_flat.index(a) for a in out_flat]
    if order != sorted(order):
        x = _r.transpose(x, order)
    merged = []
    for group in out_groups:
        dims = [sizes[a] for a in group]
        merged.append(None if None in dims else math.prod(dims))
    if len(merged) != len(out_flat):
        if merged.count(None) > 1:
            raise ValueError("rearrange: more than one output group has an unknown size.")
        x = _r.reshape(x, tuple(-1 if m is None else m for m in merged))
    return x
