"""Benchmark of the optimizer updates: fkeras adam_update against NumPy and torch.optim.Adam.

Not a test. Validates fkeras's Adam step against the float64 reference once, then times one
Adam step over a flat float32 buffer of 1M and 10M parameters at 1 and 2 threads (medians of
--repeats, the variants taking turns in blocks: see median_seconds): fkeras
(fkeras._C.adam_update), NumPy (in-place float32 ops) and, when torch is importable,
torch.optim.Adam with foreach=True and with fused=True (where this torch supports it on the
CPU). GB/s counts 7 float32 transfers per element (read param, m, v, grad; write param, m, v).
Ratio = the faster torch variant's time / fkeras time (> 1: fkeras faster). The machine may be
shared: numbers are medians, and noisy.

Usage: python bench/bench_optimizers.py [--repeats 15] [--threads 1 2] [--sizes 1000000 10000000]
"""

import argparse

import numpy as np

from fkeras import _C
from timing import median_seconds
from fkeras.backend.reference import optimizers as ref

try:
    import torch
except ImportError:  # the fkeras and numpy columns still print
    torch = None

LR, B1, B2, EPS = 1e-3, 0.9, 0.999, 1e-7


def validate(rng):
    n = 10007
    p, g = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    ours = [p.copy(), np.zeros(n, np.float32), np.zeros(n, np.float32)]
    theirs = [a.copy() for a in ours]
    for step in (1, 2, 3):
        _C.adam_update(ours[0], ours[1], ours[2], None, g, n, LR, B1, B2, EPS, step, 0.0)
        ref.adam_update(theirs[0], theirs[1], theirs[2], None, g, n, LR, B1, B2, EPS, step, 0.0)
    err = np.abs(ours[0] - theirs[0]).max()
    assert err < 1e-6, f"fkeras Adam differs from the reference (max error {err:.1e})"


class NumpyAdam:
    """Keras 3 Adam in in-place float32 NumPy ops (one step per call)."""

    def __init__(self, p, g):
        self.p, self.g = p, g
        self.m, self.v, self.tmp = np.zeros_like(p), np.zeros_like(p), np.empty_like(p)
        self.t = 0

    def __call__(self):
        self.t += 1
        alpha = np.float32(LR * np.sqrt(1 - B2**self.t) / (1 - B1**self.t))
        np.subtract(self.g, self.m, out=self.tmp)
        self.m += self.tmp * np.float32(1 - B1)
        np.multiply(self.g, self.g, out=self.tmp)
        self.tmp -= self.v
        self.v += self.tmp * np.float32(1 - B2)
        np.sqrt(self.v, out=self.tmp)
        self.tmp += np.float32(EPS)
        self.p -= self.m * alpha / self.tmp


class FkerasAdam:
    """fkeras._C.adam_update on one flat buffer (one step per call)."""

    def __init__(self, p, g):
        self.p, self.g = p, g
        self.m, self.v = np.zeros_like(p), np.zeros_like(p)
        self.t = 0

    def __call__(self):
        self.t += 1
        _C.adam_update(
            self.p, self.m, self.v, None, self.g, self.p.size, LR, B1, B2, EPS, self.t, 0.0
        )


def torch_adam(p, g, **kwargs):
    param = torch.nn.Parameter(torch.from_numpy(p.copy()))
    param.grad = torch.from_numpy(g)
    try:
        opt = torch.optim.Adam([param], lr=LR, betas=(B1, B2), eps=EPS, **kwargs)
        opt.step()
    except (RuntimeError, ValueError, TypeError):
        return None  # this torch has no such CPU implementation
    return opt.step


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    opts = parser.parse_args()
    rng = np.random.default_rng(0)
    validate(rng)
    print(
        f"fkeras ISA {_C.cpu_isa()}; torch {torch.__version__ if torch else 'not installed'}; "
        f"median of {opts.repeats} (shared machine: noisy)"
    )
    hdr = (
        f"{'params':>10} {'th':>2} {'fkeras ms':>9} {'GB/s':>6} {'numpy ms':>9} "
        f"{'foreach ms':>10} {'fused ms':>9} {'GB/s':>6} {'ratio':>6}"
    )
    print(hdr + "\n" + "-" * len(hdr))
    for n in opts.sizes:
        p = rng.standard_normal(n, dtype=np.float32)
        g = (rng.standard_normal(n, dtype=np.float32) * np.float32(0.01)).astype(np.float32)
        fkeras_step = FkerasAdam(p.copy(), g)
        nbytes = 7 * 4 * n
        t_numpy = median_seconds(NumpyAdam(p.copy(), g), repeats=max(3, opts.repeats // 2))
        for threads in opts.threads:
            _C.set_num_threads(threads)
            fns = [fkeras_step]
            if torch is not None:
                torch.set_num_threads(threads)
                fns += [torch_adam(p, g, foreach=True), torch_adam(p, g, fused=True)]
            times = median_seconds(*[f for f in fns if f is not None], repeats=opts.repeats)
            times = times if isinstance(times, list) else [times]
            times = iter(times)
            t_ours = next(times)
            line = (
                f"{n:>10} {threads:>2} {t_ours * 1e3:9.2f} {nbytes / t_ours / 1e9:6.1f} "
                f"{t_numpy * 1e3:9.2f}"
            )
            if torch is not None:
                theirs = [next(times) if f is not None else None for f in fns[1:]]
                best = min(t for t in theirs if t is not None)
                cols = [f"{t * 1e3:.2f}" if t else "n/a" for t in theirs]
                line += (
                    f" {cols[0]:>10} {cols[1]:>9} {nbytes / best / 1e9:6.1f} {best / t_ours:6.2f}"
                )
            print(line, flush=True)


if __name__ == "__main__":
    main()
