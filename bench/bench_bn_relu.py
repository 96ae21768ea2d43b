"""Benchmark of BatchNormalization + ReLU: the fused kernels against the unfused pair.

Not a test. At the CNN+BN fit's two BN shapes (channels last), times one training step of
BN + ReLU both ways on the compiled kernels:
- pair:  batchnorm_forward_train, activation_forward (relu), activation_backward (relu),
         batchnorm_backward (dx, dgamma, dbeta);
- fused: batchnorm_relu_forward_train, batchnorm_relu_backward.
Outputs are checked equal first (bit for bit). Timing: process CPU time (time.process_time,
robust to a shared machine's load) at 1 thread by default, the two variants alternating in
blocks, median per step over --blocks blocks. Full-tensor reads and writes per step: pair 13
(forward: x twice, write y, y, write relu(y); backward: dy, y, write g, then g and x twice,
write dx), fused 8 (x twice, write y; dy and x twice, write dx).

Usage: python bench/bench_bn_relu.py [--threads 1] [--blocks 9] [--steps 10]
"""

import argparse
import statistics
import time

import numpy as np

from fkeras import _C
from fkeras.backend import codes

EPS = 1e-3
SHAPES = {"64x26x26x32": (64 * 26 * 26, 32, 1), "64x24x24x64": (64 * 24 * 24, 64, 1)}


def _buffers(shape, rng):
    outer, C, inner = shape
    x = rng.standard_normal(shape).astype(np.float32)
    dy = rng.standard_normal(shape).astype(np.float32)
    gamma = (rng.random(C) + 0.5).astype(np.float32)
    beta = rng.standard_normal(C).astype(np.float32)
    return x, dy, gamma, beta


def pair_step(x, dy, gamma, beta, shape, out):
    outer, C, inner = shape
    bn_y, y, g, dx = out["a"], out["b"], out["c"], out["dx"]
    var, mean, inv, dg, db = (np.empty(C, np.float32) for _ in range(5))
    _C.batchnorm_forward_train(bn_y, var, mean, inv, x, gamma, beta, outer, C, inner, EPS)
    _C.activation_forward(y, bn_y, y.size, codes.RELU, 0.0)
    _C.activation_backward(g, dy, bn_y, y, y.size, codes.RELU, 0.0)
    _C.batchnorm_backward(dx, dg, db, g, x, mean, inv, gamma, outer, C, inner)
    return y, dx, dg, db


def fused_step(x, dy, gamma, beta, shape, out):
    outer, C, inner = shape
    y, dx = out["b"], out["dx"]
    var, mean, inv, scale, shift, dg, db = (np.empty(C, np.float32) for _ in range(7))
    _C.batchnorm_relu_forward_train(y, var, mean, inv, scale, shift, x, gamma, beta, outer, C,
                                    inner, EPS)
    _C.batchnorm_relu_backward(dx, dg, db, dy, x, mean, inv, scale, shift, gamma, outer, C, inner)
    return y, dx, dg, db


def _block(fn, args, steps):
    t0 = time.process_time()
    for _ in range(steps):
        fn(*args)
    return (time.process_time() - t0) / steps


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--blocks", type=int, default=9)
    p.add_argument("--steps", type=int, default=10)
    args = p.parse_args()
    _C.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    print(f"threads {args.threads}, isa {_C.cpu_isa()}, process CPU time, median of "
          f"{args.blocks} alternating blocks of {args.steps} steps")
    for name, shape in SHAPES.items():
        x, dy, gamma, beta = _buffers(shape, rng)
        out = {k: np.empty(shape, np.float32) for k in ("a", "b", "c", "dx")}
        want = [a.copy() for a in pair_step(x, dy, gamma, beta, shape, out)]
        got = fused_step(x, dy, gamma, beta, shape, out)
        for a, b in zip(want, got):
            np.testing.assert_array_equal(a, b)
        times = {"pair": [], "fused": []}
        for _ in range(args.blocks):
            for label, fn in (("pair", pair_step), ("fused", fused_step)):
                times[label].append(_block(fn, (x, dy, gamma, beta, shape, out), args.steps))
        pm, fm = (statistics.median(times[k]) * 1e3 for k in ("pair", "fused"))
        mb = x.nbytes / 1e6
        print(f"{name} ({mb:.1f} MB per tensor): pair {pm:.3f} ms, fused {fm:.3f} ms, "
              f"{pm / fm:.2f}x; CPU ms per step saved {pm - fm:.3f}")


if __name__ == "__main__":
    main()
