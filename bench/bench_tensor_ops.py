"""Per-op overhead of fkeras's eager Tensor operators against the same NumPy operation.

For `t + u`, `t * 2.0`, `t[0]` and `t @ u` on float32 (n, n) operands, times:
- numpy:      the operation on NumPy arrays;
- array mode: the fkeras op function on bare buffers inside `array_mode()` (fkeras's own
              layer and train-step code path: `ops.add(a, b)`, ...);
- tensor:     the Python operator on `fkeras.Tensor`s (user code, no tape);
- tape:       the same inside a GradientTape that watches `t` (the op is recorded).
Each sample times a batch of calls (time per call = batch time / batch size); the
implementations take turns sample by sample so that they share the machine's noise, and each
figure is the median over samples. Every variant's result is first checked against NumPy.

Usage: python bench/bench_tensor_ops.py [--samples 41] [--sizes 8 256]
"""

import argparse
import statistics
import time

import numpy as np

import fkeras
from fkeras import ops
from fkeras.engine.tensor import Tensor, array_mode

OPS = {  # name: (operator form, fkeras op function form)
    "t + u": (lambda t, u: t + u, lambda a, b: ops.add(a, b)),
    "t * 2.0": (lambda t, u: t * 2.0, lambda a, b: ops.multiply(a, 2.0)),
    "t[0]": (lambda t, u: t[0], lambda a, b: ops.getitem(a, 0)),
    "t @ u": (lambda t, u: t @ u, lambda a, b: ops.matmul(a, b)),
}


def _batch(n_calls, fn, *args):
    t0 = time.perf_counter()
    for _ in range(n_calls):
        fn(*args)
    return (time.perf_counter() - t0) / n_calls


def _numpy(fn, a, b, n):
    return _batch(n, fn, a, b)


def _array_mode(fn, a, b, n):
    with array_mode():
        return _batch(n, fn, a, b)


def _tensor(fn, t, u, n):
    return _batch(n, fn, t, u)


def _tape(fn, t, u, n):
    with fkeras.GradientTape() as tape:  # a fresh tape per batch: the recording stays small
        tape.watch(t)
        return _batch(n, fn, t, u)


def _check(name, size, a, b, t, u):
    op, fn = OPS[name]
    expect = op(a.astype(np.float64), b.astype(np.float64))
    with array_mode():
        got_array = fn(a, b)
    with fkeras.GradientTape() as tape:
        tape.watch(t)
        got_tape = op(t, u)
    for got in (got_array, op(t, u), got_tape):
        np.testing.assert_allclose(np.asarray(got), expect, rtol=1e-4, atol=1e-4 * size)


def measure(name, size, samples):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size)).astype(np.float32)
    b = rng.standard_normal((size, size)).astype(np.float32)
    t, u = Tensor(a), Tensor(b)
    _check(name, size, a, b, t, u)
    op, fn = OPS[name]
    # Aim for ~2 ms per batch so that timer resolution and loop overhead do not matter.
    per_call = max(_numpy(op, a, b, 20), 1e-7)
    n = int(min(2000, max(5, 2e-3 / per_call)))
    variants = {"numpy": (_numpy, op, a, b), "array": (_array_mode, fn, a, b),
                "tensor": (_tensor, op, t, u), "tape": (_tape, op, t, u)}
    times = {k: [] for k in variants}
    for _ in range(samples + 2):  # the first two rounds warm up
        for k, (run, f, x, y) in variants.items():
            times[k].append(run(f, x, y, n))
    return {k: statistics.median(v[2:]) for k, v in times.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=41)
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 256])
    args = parser.parse_args()
    print(f"median of {args.samples} samples per figure; us per call; ratio = fkeras / numpy")
    print(f"{'op':>8} {'n':>4} | {'numpy':>8} {'array':>8} {'tensor':>8} {'tape':>8} | "
          f"{'array x':>7} {'tensor x':>8} {'tape x':>7}")
    for size in args.sizes:
        for name in OPS:
            m = measure(name, size, args.samples)
            us = {k: v * 1e6 for k, v in m.items()}
            print(f"{name:>8} {size:>4} | {us['numpy']:8.2f} {us['array']:8.2f} "
                  f"{us['tensor']:8.2f} {us['tape']:8.2f} | {m['array'] / m['numpy']:7.2f} "
                  f"{m['tensor'] / m['numpy']:8.2f} {m['tape'] / m['numpy']:7.2f}")


if __name__ == "__main__":
    main()
