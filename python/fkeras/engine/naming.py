"""Unique automatic names, Keras 2/3 style: `dense`, `dense_1`, `dense_2`, ...

The counter is per prefix, starts omitted for the first, and `clear_session()` resets it.
Explicit names neither advance nor consult the counter (uniqueness is checked by Model).
"""

import re
import threading

_lock = threading.Lock()
_counts = {}


def to_snake_case(name):
    """MyHTTPLayer -> my_http_layer, Conv2DTranspose -> conv2d_transpose."""
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    s = re.sub(r"([a-z])([A-Z])", r"\1_\2", s)
    return s.lower()


def unique_name(prefix):
    with _lock:
        n = _counts.get(prefix, 0)
        _counts[prefix] = n + 1
    return prefix if n == 0 else f"{prefix}_{n}"


def reset():
    with _lock:
        _counts.clear()


def get_uid(prefix=""):
    """Advances the counter of `prefix` and returns it (1 on the first call after a reset), the
    counter automatic names use (keras.backend.get_uid)."""
    with _lock:
        n = _counts.get(prefix, 0) + 1
        _counts[prefix] = n
    return n
