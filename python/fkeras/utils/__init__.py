"""Utilities (keras.utils)."""

from fkeras.utils.random import set_random_seed


def clear_session():
    """Resets the automatic layer names (`dense`, `dense_1`, ... start again)."""
    from fkeras.engine import naming

    naming.reset()


__all__ = ["clear_session", "set_random_seed"]
