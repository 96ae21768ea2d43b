"""Cost of a `fkeras.ops` call on a small array against the NumPy call it wraps (issue 12).

User code calls the ops on NumPy arrays or Tensors outside a tape (tensor mode); each op is
timed on float32 (n, n) operands against its NumPy counterpart, in batches of calls that take
turns sample by sample (so both see the same machine noise); figures are medians in us per
call, and ratio = fkeras / numpy (issue 12 asks for <= 2 on a small array). The results are
checked against NumPy first. The NumPy call is the one the op's forward makes (`transpose`
and a sliced `t[...]` return contiguous copies, so their NumPy column copies too). `matmul` and `tanh` run fkeras's own kernels (GEMM, activation), not
NumPy's: their NumPy column is for scale only.

Usage: python bench/bench_op_calls.py [--samples 31] [--sizes 8 256]
"""

import argparse
import statistics
import time

import numpy as np

from fkeras import ops

# name: (fkeras call, NumPy call), each on (a, b)
OPS = {
    "add": (lambda a, b: ops.add(a, b), lambda a, b: np.add(a, b)),
    "subtract": (lambda a, b: ops.subtract(a, b), lambda a, b: np.subtract(a, b)),
    "multiply": (lambda a, b: ops.multiply(a, b), lambda a, b: np.multiply(a, b)),
    "divide": (lambda a, b: ops.divide(a, b), lambda a, b: np.divide(a, b)),
    "maximum": (lambda a, b: ops.maximum(a, b), lambda a, b: np.maximum(a, b)),
    "power": (lambda a, b: ops.power(a, 2.0), lambda a, b: np.power(a, 2.0)),
    "greater": (lambda a, b: ops.greater(a, b), lambda a, b: np.greater(a, b)),
    "equal": (lambda a, b: ops.equal(a, b), lambda a, b: np.equal(a, b)),
    "negative": (lambda a, b: ops.negative(a), lambda a, b: np.negative(a)),
    "abs": (lambda a, b: ops.abs(a), lambda a, b: np.abs(a)),
    "exp": (lambda a, b: ops.exp(a), lambda a, b: np.exp(a)),
    "log": (lambda a, b: ops.log(b), lambda a, b: np.log(b)),
    "sqrt": (lambda a, b: ops.sqrt(b), lambda a, b: np.sqrt(b)),
    "square": (lambda a, b: ops.square(a), lambda a, b: np.square(a)),
    "t + u": (lambda t, u: t + u, lambda a, b: a + b),
    "t * 2.0": (lambda t, u: t * 2.0, lambda a, b: a * 2.0),
    "t > u": (lambda t, u: t > u, lambda a, b: a > b),
    "-t": (lambda t, u: -t, lambda a, b: -a),
    "t[0]": (lambda t, u: t[0], lambda a, b: a[0]),
    "t[1:, :2]": (lambda t, u: t[1:, :2], lambda a, b: np.ascontiguousarray(a[1:, :2])),
    "sum": (lambda a, b: ops.sum(a), lambda a, b: np.sum(a)),
    "mean(axis=0)": (lambda a, b: ops.mean(a, axis=0), lambda a, b: np.mean(a, axis=0)),
    "reshape": (lambda a, b: ops.reshape(a, (-1,)), lambda a, b: np.reshape(a, (-1,))),
    "transpose": (lambda a, b: ops.transpose(a),
                  lambda a, b: np.ascontiguousarray(np.transpose(a))),
    "where": (lambda a, b: ops.where(a > 0, a, b), lambda a, b: np.where(a > 0, a, b)),
    "clip": (lambda a, b: ops.clip(a, -0.5, 0.5), lambda a, b: np.clip(a, -0.5, 0.5)),
    "concatenate": (lambda a, b: ops.concatenate([a, b]), lambda a, b: np.concatenate([a, b])),
    "tanh": (lambda a, b: ops.tanh(a), lambda a, b: np.tanh(a)),
    "matmul": (lambda a, b: ops.matmul(a, b), lambda a, b: np.matmul(a, b)),
}
TENSOR_OPERANDS = {"t + u", "t * 2.0", "t > u", "-t", "t[0]", "t[1:, :2]"}


def _batch(n, fn, a, b):
    t0 = time.perf_counter()
    for _ in range(n):
        fn(a, b)
    return (time.perf_counter() - t0) / n


def measure(name, size, samples):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size)).astype(np.float32)
    b = np.abs(rng.standard_normal((size, size))).astype(np.float32) + 0.5
    fk, npf = OPS[name]
    x, y = (ops.convert_to_tensor(a), ops.convert_to_tensor(b)) \
        if name in TENSOR_OPERANDS else (a, b)
    np.testing.assert_allclose(np.asarray(fk(x, y), dtype=np.float64), npf(a, b),
                               rtol=1e-5, atol=1e-5 * size)
    n = int(min(5000, max(5, 2e-3 / max(_batch(20, npf, a, b), 1e-7))))
    times = {"numpy": [], "fkeras": []}
    for _ in range(samples + 2):  # the first two rounds warm up
        times["numpy"].append(_batch(n, npf, a, b))
        times["fkeras"].append(_batch(n, fk, x, y))
    return {k: statistics.median(v[2:]) for k, v in times.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=31)
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 256])
    args = parser.parse_args()
    print(f"median of {args.samples} samples; us per call; ratio = fkeras / numpy")
    print(f"{'op':>13} {'n':>4} | {'numpy':>8} {'fkeras':>8} | {'ratio':>6}")
    for size in args.sizes:
        for name in OPS:
            m = measure(name, size, args.samples)
            ratio = m["fkeras"] / m["numpy"]
            print(f"{name:>13} {size:>4} | {m['numpy'] * 1e6:8.2f} {m['fkeras'] * 1e6:8.2f} | "
                  f"{ratio:6.2f}{'' if ratio <= 2.0 else '  > 2x'}")


if __name__ == "__main__":
    main()
