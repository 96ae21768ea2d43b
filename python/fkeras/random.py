"""fkeras.random: seeded random operations (keras.random names).

Seeds: an int gives the same draw every call; a SeedGenerator gives a new, reproducible draw
per call; None draws a seed from the global generator (`fkeras.utils.set_random_seed`).
"""

import numbers

import numpy as np

from fkeras.distribution import _state as _dist
from fkeras.engine import naming
from fkeras.engine.name_scope import name_scope
from fkeras.engine import stateless as _stateless
from fkeras.engine.variable import Variable
from fkeras.engine import replay as _replay
from fkeras.ops import random as _ops_random
from fkeras.utils import random as _random


_STEP = np.array([0, 1], np.int32)


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

    _fk_seed_generator = True  # layers track generators held as attributes (`variables`)

    def __init__(self, seed=None, name=None, **kwargs):
        kwargs.pop("backend", None)
        if kwargs:
            raise ValueError(f"Unrecognized keyword arguments: {kwargs}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)):
            raise ValueError(f"Argument `seed` must be an integer. Received: seed={seed}")
        self.name = name or naming.unique_name("seed_generator")
        self.initial_seed = seed
        self._rng = _random.make_rng(seed)
        # Keras 3's state variable ([seed, draws so far], int32, not trainable), listed in the
        # `variables` of a layer holding the generator; fkeras's stream comes from `_rng`, the
        # state counts its draws.
        start = int(seed) if seed is not None else int(self._rng.integers(1, 10**9))
        start = (start & 0xFFFFFFFF ^ 0x80000000) - 0x80000000  # as int32 bits, as Keras
        with name_scope(self.name, caller=self):
            self.state = Variable(np.array([start, 0], np.int32), dtype="int32",
                                  trainable=False, name="seed_generator_state")

    def next(self):
        """The next seed of the stream (a non-negative 63-bit int)."""
        if _replay.active():  # a rematerialized call: its recomputation repeats the seeds
            return _replay.draw_seed(self._draw)
        return self._draw()

    def _draw(self):
        state = self.state._value
        if type(state) is np.ndarray:  # a host buffer: counted in place (one draw per call)
            if not _stateless.discarding():
                state[1] += 1
        else:
            self.state.assign_add(_STEP)
        return int(self._rng.integers(0, 2**63 - 1))

    def get_config(self):
        return {"seed": self.initial_seed, "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def draw_seed(seed):
    """An int seed from an int, a SeedGenerator or None (the global generator).

    Under a DataParallel distribution the drawn seeds (not an int seed) are mixed with the
    process rank: the generators stay in step across ranks (the same shuffles), while each
    rank's dropout masks and noise are its own, as with one mask over the global batch."""
    if seed is None:
        return _per_rank(_random.next_seed())
    if isinstance(seed, SeedGenerator):
        return _per_rank(seed.next())
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"`seed` must be an int, a SeedGenerator or None. Received: seed={seed!r}")
    return seed % (2**63 - 1)


def _per_rank(seed):
    comm = _dist.COMM
    if comm is None or comm.rank == 0:
        return seed
    return (seed + comm.rank * 0x9E3779B97F4A7C15) % (2**63 - 1)


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


# ---- distributions (draws are constants to autodiff; mean/stddev tensors stay differentiable) ----

def _shape_or_symbolic(shape, dtype):
    """A KerasTensor when a dimension is unknown (the call is symbolic), else None."""
    shape = tuple(shape)
    if any(d is None for d in shape):
        from fkeras.engine.keras_tensor import KerasTensor

        return KerasTensor(shape, dtype)
    return None


def _float_dtype(dtype, fn=None):
    from fkeras import config
    from fkeras.ops.dtypes import standardize_dtype

    name = standardize_dtype(dtype or config.floatx())
    if fn is not None and not name.startswith(("float", "bfloat")):
        # Keras 3: uniform raises this; its normal draws fail in the backend (no silent
        # truncation of float draws to integers)
        raise ValueError(f"`keras.random.{fn}` requires a floating point `dtype`. "
                         f"Received: dtype={dtype}")
    return name


def _finish(draw, dtype, scale=None, shift=None):
    from fkeras import ops

    out = ops.convert_to_tensor(np.asarray(draw).astype(dtype, copy=False))
    if scale is not None and not (isinstance(scale, (int, float)) and scale == 1):
        out = ops.multiply(out, scale)
    if shift is not None and not (isinstance(shift, (int, float)) and shift == 0):
        out = ops.add(out, shift)
    return out


def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Samples from a normal distribution (keras.random.normal)."""
    dtype = _float_dtype(dtype, "normal")
    sym = _shape_or_symbolic(shape, dtype)
    if sym is not None:
        return sym
    rng = np.random.default_rng(draw_seed(seed))
    return _finish(rng.standard_normal(tuple(shape)), dtype, stddev, mean)


def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    """Samples from a uniform distribution on [minval, maxval) (keras.random.uniform)."""
    dtype = _float_dtype(dtype, "uniform")
    sym = _shape_or_symbolic(shape, dtype)
    if sym is not None:
        return sym
    rng = np.random.default_rng(draw_seed(seed))
    if isinstance(minval, (int, float)) and isinstance(maxval, (int, float)):
        return _finish(rng.uniform(minval, maxval, tuple(shape)), dtype)
    from fkeras import ops

    return _finish(rng.random(tuple(shape)), dtype, ops.subtract(maxval, minval), minval)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Normal samples redrawn until within two standard deviations of the mean."""
    dtype = _float_dtype(dtype, "truncated_normal")
    sym = _shape_or_symbolic(shape, dtype)
    if sym is not None:
        return sym
    rng = np.random.default_rng(draw_seed(seed))
    z = rng.standard_normal(tuple(shape))
    bad = np.abs(z) > 2.0
    while bad.any():
        z[bad] = rng.standard_normal(int(bad.sum()))
        bad = np.abs(z) > 2.0
    return _finish(z, dtype, stddev, mean)


def randint(shape, minval, maxval, dtype="int32", seed=None):
    """Random integers in [minval, maxval) (keras.random.randint)."""
    sym = _shape_or_symbolic(shape, dtype)
    if sym is not None:
        return sym
    rng = np.random.default_rng(draw_seed(seed))
    return _finish(rng.integers(int(minval), int(maxval), tuple(shape)), dtype)


def shuffle(x, axis=0, seed=None):
    """`x` shuffled along `axis` (keras.random.shuffle)."""
    from fkeras import ops

    rng = np.random.default_rng(draw_seed(seed))
    n = ops.shape(x)[axis]
    index = [slice(None)] * ops.ndim(x)
    index[axis] = rng.permutation(n)
    return ops.getitem(x, tuple(index))


def categorical(logits, num_samples, dtype="int32", seed=None):
    """Draws `num_samples` class indices per row of `logits` (keras.random.categorical)."""
    from fkeras import ops

    lg = np.asarray(ops.convert_to_numpy(logits), np.float64)
    if lg.ndim != 2:
        raise ValueError(f"`logits` should be a 2-D tensor; received shape {lg.shape}.")
    p = np.exp(lg - lg.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    rng = np.random.default_rng(draw_seed(seed))
    cum = np.cumsum(p, axis=1)
    u = rng.random((lg.shape[0], int(num_samples)))
    out = np.minimum((u[:, :, None] > cum[:, None, :]).sum(axis=2), lg.shape[1] - 1)
    return _finish(out, dtype)


def gamma(shape, alpha, dtype=None, seed=None):
    """Samples from a Gamma(alpha, 1) distribution (keras.random.gamma)."""
    dtype = _float_dtype(dtype)
    rng = np.random.default_rng(draw_seed(seed))
    return _finish(rng.gamma(np.asarray(alpha, np.float64), 1.0, tuple(shape)), dtype)


def binomial(shape, counts, probabilities, dtype=None, seed=None):
    """Samples from a binomial distribution (keras.random.binomial)."""
    dtype = _float_dtype(dtype)
    rng = np.random.default_rng(draw_seed(seed))
    return _finish(rng.binomial(np.asarray(counts), np.asarray(probabilities),
                                tuple(shape)), dtype)


def beta(shape, alpha, beta, dtype=None, seed=None):  # noqa: A002 (Keras's argument name)
    """Samples from a Beta(alpha, beta) distribution (keras.random.beta)."""
    dtype = _float_dtype(dtype)
    rng = np.random.default_rng(draw_seed(seed))
    return _finish(rng.beta(np.asarray(alpha, np.float64), np.asarray(beta, np.float64),
                            tuple(shape)), dtype)


__all__ = ["SeedGenerator", "beta", "binomial", "categorical", "dropout", "gamma", "normal",
           "randint", "shuffle", "truncated_normal", "uniform"]
