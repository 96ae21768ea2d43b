"""Helpers for op tests: the tape's gradient against central differences.

On the float64 `reference` device, with a random cotangent for EVERY output and a random
direction per input: <grad_i, v> must equal d/de sum_k <cot_k, f_k(x_i + e v)> at e = 0.
"""

import numpy as np

import fkeras


def _as_list(y):
    return list(y) if isinstance(y, (list, tuple)) else [y]


def fd_check(fn, inputs, wrt, rng, eps=1e-6, tol=1e-6):
    """Checks the gradient of fn(*inputs) for the inputs at positions `wrt`.

    `inputs` may hold non-float entries (None, integer arrays): they are passed unchanged.
    """
    with fkeras.device("reference"):
        xs = [np.asarray(x, np.float64) if i in wrt else x for i, x in enumerate(inputs)]
        with fkeras.GradientTape() as tape:
            tape.watch([xs[i] for i in wrt])
            outs = _as_list(fn(*xs))
        cots = [rng.standard_normal(np.shape(o)) for o in outs]
        grads = tape.gradient(outs, [xs[i] for i in wrt], output_gradients=cots)

        def objective(args):
            return sum(float(np.sum(c * np.asarray(o))) for c, o in zip(cots, _as_list(fn(*args))))

        for i, g in zip(wrt, grads):
            assert g is not None, f"no gradient for input {i}"
            assert np.shape(g) == np.shape(xs[i]), (i, np.shape(g), np.shape(xs[i]))
            v = rng.standard_normal(np.shape(xs[i]))
            plus = [a + eps * v if j == i else a for j, a in enumerate(xs)]
            minus = [a - eps * v if j == i else a for j, a in enumerate(xs)]
            numeric = (objective(plus) - objective(minus)) / (2 * eps)
            analytic = float(np.sum(np.asarray(g) * v))
            assert abs(numeric - analytic) <= tol * max(1.0, abs(numeric)), \
                f"input {i}: numeric {numeric} vs analytic {analytic}"
