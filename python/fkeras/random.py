"""fkeras.random: seeded random operations (keras.random names).

Seeds: an int gives the same draw every call; a SeedGenerator gives a new, reproducible draw
per call; None draws a seed from the global generator (`fkeras.utils.set_random_seed`).
"""

from fkeras.ops import random as _ops_random
from fkeras.utils import random as _random


class SeedGenerator:
    """A reproducible stream of seeds (keras.random.SeedGenerator).

    Args:
        seed: an int; None draws the starting seed from the global generator.

    Example:
    ```python
    gen = fkeras.random.SeedGenerator(1337)
    a = fkeras.random.dropout(x, 0.5, seed=gen)   # differs from the next call,
    b = fkeras.random.dropout(x, 0.5, seed=gen)   # and repeats after re-seeding
    ```
    """

    def __init__(self, seed=None):
        self.initial_seed = seed
        self._rng = _random.make_rng(seed)

    def next(self):
        """The next seed of the stream (a non-negative 63-bit int)."""
        return int(self._rng.integers(0, 2**63 - 1))

    def get_config(self):
        return {"seed": self.initial_seed}


def draw_seed(seed):
    """An int seed from an int, a SeedGenerator or None (the global generator)."""
    if seed is None:
        return _random.next_seed()
    if isinstance(seed, SeedGenerator):
        return seed.next()
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"`seed` must be an int, a SeedGenerator or None. Received: seed={seed!r}")
    return seed % (2**63 - 1)


def dropout(inputs, rate, noise_shape=None, seed=None):
    """keras.random.dropout: zeroes elements with probability `rate`, scales the rest.

    Args:
        inputs: a tensor.
        rate: the drop probability, in [0, 1].
        noise_shape: the shape of the mask (broadcast over inputs); None entries take the
            input's size.
        seed: an int, a SeedGenerator or None.

    Returns:
        inputs * mask, mask = keep / (1 - rate).
    """
    return _ops_random.dropout(inputs, rate, noise_shape=noise_shape, seed=draw_seed(seed))


__all__ = ["SeedGenerator", "dropout"]
