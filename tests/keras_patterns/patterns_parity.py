"""Shared set-up of the Keras-pattern tests: each test writes its model, layer, loss, metric or
loop ONCE as a function of the library module (`lib` is `fkeras`, or `keras` on its torch
backend), the way a user writes `import fkeras as keras`. `run_both` trains it with fkeras,
checks the run trained and stayed finite, then (when keras is importable) trains it again with
Keras 3 from the same initial weights and data and compares every returned figure.

    from patterns_parity import no_grad, run_both, seed_weights, tape, to_np
"""

import contextlib
import importlib.util
import os

import numpy as np

if "KERAS_BACKEND" not in os.environ and importlib.util.find_spec("torch") is not None:
    os.environ["KERAS_BACKEND"] = "torch"

import fkeras

RTOL = 1e-4
ATOL = 1e-6


def keras_or_none():
    """Keras 3 on its torch backend when importable, else None (the tape and no_grad helpers
    speak torch)."""
    try:
        import keras
    except ImportError:
        return None
    return keras if keras.backend.backend() == "torch" else None


def to_np(x):
    """A tensor / variable / scalar of either library as a float64 NumPy array."""
    if hasattr(x, "detach"):  # a torch tensor
        x = x.detach().cpu().numpy()
    elif hasattr(x, "numpy") and not isinstance(x, np.ndarray):
        x = x.numpy()
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=np.float64)


def seed_weights(model, seed=0, scale=0.3):
    """Sets every weight of `model` from a seeded normal draw (same values in both libraries,
    given the same weight order); returns the values set."""
    rng = np.random.RandomState(seed)
    values = [(rng.standard_normal(w.shape) * scale).astype("float32")
              for w in model.get_weights()]
    model.set_weights(values)
    return values


class _TorchTape:
    """tf.GradientTape's surface over torch autograd, for the Keras (torch) side only: what
    the torch guides do with `loss.backward()` and `v.value.grad`."""

    def __init__(self, persistent=False):
        self.persistent = persistent

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def gradient(self, target, sources):
        import torch

        values = [s.value if hasattr(s, "value") else s for s in sources]
        return list(torch.autograd.grad(target, values, allow_unused=True,
                                        retain_graph=self.persistent))


def tape(lib, persistent=False):
    """`lib.GradientTape()` for fkeras; torch autograd behind the same surface for keras."""
    if lib is fkeras:
        return fkeras.GradientTape(persistent=persistent)
    return _TorchTape(persistent=persistent)


def no_grad(lib):
    """The scope an optimizer update needs: none in fkeras, `torch.no_grad()` in keras."""
    if lib is fkeras:
        return contextlib.nullcontext()
    import torch

    return torch.no_grad()


def _flatten(result, prefix=""):
    if isinstance(result, dict):
        out = {}
        for k in sorted(result):
            out.update(_flatten(result[k], f"{prefix}{k}/"))
        return out
    if isinstance(result, (list, tuple)) and result and not np.isscalar(result[0]):
        out = {}
        for i, v in enumerate(result):
            out.update(_flatten(v, f"{prefix}{i}/"))
        return out
    return {prefix.rstrip("/"): to_np(result)}


def run_both(train, rtol=RTOL, atol=ATOL):
    """Runs `train(lib)` with fkeras (asserting every returned figure is finite), then with
    Keras 3 when importable and compares figure by figure (relative difference <= rtol).

    `train` returns a dict (nested dicts/lists allowed) of losses, weights, metric values.
    Returns (fkeras figures, keras figures or None)."""
    fk = _flatten(train(fkeras))
    assert fk, "the pattern returned no figures"
    for name, value in fk.items():
        assert np.all(np.isfinite(value)), f"fkeras: {name} is not finite: {value}"
    keras = keras_or_none()
    if keras is None:
        return fk, None
    keras.utils.set_random_seed(0)
    kr = _flatten(train(keras))
    assert sorted(fk) == sorted(kr), (sorted(fk), sorted(kr))
    for name in fk:
        np.testing.assert_allclose(fk[name], kr[name], rtol=rtol, atol=atol,
                                   err_msg=f"{name}: fkeras vs keras")
    return fk, kr


def regression_data(n=64, d_in=4, d_out=1, seed=0):
    """float32 (x, y) with y a fixed linear map of x plus noise."""
    rng = np.random.RandomState(seed)
    x = rng.standard_normal((n, d_in)).astype("float32")
    w = rng.standard_normal((d_in, d_out)).astype("float32")
    y = (x @ w + 0.1 * rng.standard_normal((n, d_out))).astype("float32")
    return x, y


def classification_data(n=64, d_in=6, classes=3, seed=0):
    """float32 features and int labels from a fixed linear scorer."""
    rng = np.random.RandomState(seed)
    x = rng.standard_normal((n, d_in)).astype("float32")
    w = rng.standard_normal((d_in, classes)).astype("float32")
    return x, np.argmax(x @ w, axis=1).astype("int32")


def losses_trained(history_losses):
    """The pattern trained: the loss went down over the run."""
    assert history_losses[-1] < history_losses[0], history_losses
