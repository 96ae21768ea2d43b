"""Benchmark of the CUDA pointwise kernels (fkeras._C_cuda): GB/s against the device's copy
bandwidth (fkeras._C_cuda.copy_bandwidth_gbs). Skips (exit 0 with a message) without a GPU.

Bytes counted are those each kernel must move (4 per float read or written): activation
forward x, y; backward dy, x, y, dx; dropout x, y, mask; bias_add forward x, y; softmax forward
x, y; sigmoid CE forward x, z, loss; Adam param, m, v read+write and grad read. Times are CUDA
event-free wall medians of `--repeats` runs of `--iters` launches followed by a synchronize.

Usage: python bench/bench_cuda_pointwise.py [--n 16777216] [--repeats 5] [--iters 20]
"""

import argparse
import statistics
import time

import numpy as np


def _gpu():
    try:
        from fkeras import _C_cuda as g
    except ImportError:
        return None
    return g if g.device_count() > 0 else None


def timed(g, fn, repeats, iters):
    fn()
    g.synchronize()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        g.synchronize()
        ts.append((time.perf_counter() - t0) / iters)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 24)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    a = ap.parse_args()
    g = _gpu()
    if g is None:
        print("bench_cuda_pointwise: no GPU (fkeras._C_cuda missing or 0 devices): skipped")
        return
    n = a.n
    rng = np.random.default_rng(0)
    D = g.DeviceArray.from_host
    x = D(rng.standard_normal(n).astype(np.float32))
    y, dx, mask = (D(np.zeros(n, np.float32)) for _ in range(3))
    dy = D(rng.standard_normal(n).astype(np.float32))
    z = D(rng.uniform(0, 1, n).astype(np.float32))
    m, v = D(np.zeros(n, np.float32)), D(np.ones(n, np.float32))
    cols = 1024
    rows = n // cols
    b = D(np.zeros(cols, np.float32))
    copy = g.copy_bandwidth_gbs(4 * n, 20)
    cases = {
        "relu forward": (lambda: g.activation_forward(y, x, n, 1, 0.0), 2),
        "gelu forward": (lambda: g.activation_forward(y, x, n, 6, 0.0), 2),
        "tanh backward": (lambda: g.activation_backward(dx, dy, x, y, n, 3, 0.0), 4),
        "dropout forward": (lambda: g.dropout_forward(y, mask, x, n, 0.5, 1), 3),
        "bias_add forward": (lambda: g.bias_add_forward(y, x, b, rows, cols), 2),
        "bias_add backward": (lambda: g.bias_add_backward(b, dy, rows, cols), 1),
        "softmax forward 1024": (lambda: g.softmax_forward(y, x, rows, cols), 2),
        "softmax forward 16": (lambda: g.softmax_forward(y, x, n // 16, 16), 2),
        "log_softmax fwd 65536": (lambda: g.log_softmax_forward(y, x, n // 65536, 65536), 2),
        "sigmoid CE forward": (lambda: g.sigmoid_crossentropy_forward(y, x, z, n), 3),
        "adam update": (lambda: g.adam_update(x, m, v, None, dy, n, 1e-3, 0.9, 0.999, 1e-7, 1,
                                              0.0), 7),
    }
    print(f"n = {n} floats; device copy bandwidth {copy:.0f} GB/s")
    print(f"{'kernel':<24}{'ms':>9}{'GB/s':>9}{'% copy':>9}")
    for name, (fn, words) in cases.items():
        t = timed(g, fn, a.repeats, a.iters)
        gbs = words * 4 * n / t / 1e9
        print(f"{name:<24}{t * 1e3:>9.3f}{gbs:>9.0f}{100 * gbs / copy:>8.0f}%")


if __name__ == "__main__":
    main()
