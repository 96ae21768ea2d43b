"""Benchmark of the batch-norm kernels: fkeras (fkeras._C) against NumPy and PyTorch's CPU kernels.

Not a test. For each case, validates fkeras against the float64 reference once, then times
the training forward (batchnorm_forward_train) and the backward (batchnorm_backward with dx,
dgamma, dbeta) at 1 and 2 threads, and the whole step against torch's: medians of --repeats,
fkeras and torch taking turns in blocks (see median_seconds). Torch runs
torch.nn.functional.batch_norm(training=True) and the autograd backward on the same memory
(channels_last for the NHWC case), gradients reset to None every step so nothing accumulates.
GB/s counts the minimum traffic of the two-pass design: forward reads x twice and writes y,
backward reads dy and x twice and writes dx (8 tensor transfers). Ratio = torch step time /
fkeras step time (> 1: fkeras faster). The machine may be shared: numbers are medians, noisy.

Usage: python bench/bench_batchnorm.py [--repeats 15] [--threads 1 2]
"""

import argparse

import numpy as np

from fkeras import _C
from timing import median_seconds
from fkeras.backend.reference import batchnorm as ref

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # the fkeras and numpy columns still print
    torch = None

EPS = 1e-3
# (name, logical NCHW shape, layout): channels_last is (N*H*W, C, 1), channels_first (N, C, H*W).
CASES = [
    ("64x28x28x64 channels_last", (64, 64, 28, 28), "channels_last"),
    ("64x64x28x28 channels_first", (64, 64, 28, 28), "channels_first"),
]


def numpy_step(x, gamma, beta, dy, axes):
    """Float32 NumPy forward (train) + backward, the textbook formulas."""
    mean = x.mean(axis=axes, keepdims=True)
    xc = x - mean
    inv_std = 1.0 / np.sqrt((xc * xc).mean(axis=axes, keepdims=True) + np.float32(EPS))
    xhat = xc * inv_std
    y = xhat * gamma + beta
    dbeta = dy.sum(axis=axes, keepdims=True)
    dgamma = (dy * xhat).sum(axis=axes, keepdims=True)
    n = x.size // gamma.size
    dx = gamma * inv_std * (dy - dbeta / n - xhat * dgamma / n)
    return y, dx


def make_case(shape, layout, rng):
    N, C, H, W = shape
    if layout == "channels_last":
        x = rng.standard_normal((N, H, W, C), dtype=np.float32)
        view, axes, bshape = (N * H * W, C, 1), (0, 1, 2), (1, 1, 1, C)
    else:
        x = rng.standard_normal((N, C, H, W), dtype=np.float32)
        view, axes, bshape = (N, C, H * W), (0, 2, 3), (1, C, 1, 1)
    x = x * np.float32(1.5) + np.float32(0.3)
    dy = rng.standard_normal(x.shape, dtype=np.float32)
    gamma = rng.standard_normal(C, dtype=np.float32)
    beta = rng.standard_normal(C, dtype=np.float32)
    y, dx = np.empty_like(x), np.empty_like(x)
    var, mean, inv_std = (np.empty(C, np.float32) for _ in range(3))
    dgamma, dbeta = np.empty(C, np.float32), np.empty(C, np.float32)

    def forward():
        _C.batchnorm_forward_train(y, var, mean, inv_std, x, gamma, beta, *view, EPS)

    def backward():
        _C.batchnorm_backward(dx, dgamma, dbeta, dy, x, mean, inv_std, gamma, *view)

    # Validate once against the float64 reference.
    forward()
    backward()
    want = [np.zeros(view), np.zeros(C), np.zeros(C), np.zeros(C)]
    ref.batchnorm_forward_train(*want, x, gamma, beta, *view, EPS)
    wdx, wdg, wdb = np.zeros(view), np.zeros(C), np.zeros(C)
    ref.batchnorm_backward(wdx, wdg, wdb, dy, x, want[2], want[3], gamma, *view)
    for name, got, exp in (("y", y, want[0]), ("dx", dx, wdx), ("dgamma", dgamma, wdg)):
        err = np.abs(got.reshape(exp.shape) - exp).max() / np.abs(exp).max()
        assert err < 1e-5, f"{name}: fkeras differs from the reference (relative error {err:.1e})"

    g4, b4 = gamma.reshape(bshape), beta.reshape(bshape)
    case = {
        "forward": forward,
        "backward": backward,
        "step": lambda: (forward(), backward()),
        "numpy": lambda: numpy_step(x, g4, b4, dy, axes),
        "torch": None,
    }
    if torch is not None:
        perm = (0, 3, 1, 2) if layout == "channels_last" else (0, 1, 2, 3)
        tx = torch.from_numpy(x).permute(*perm).requires_grad_()
        tdy = torch.from_numpy(dy).permute(*perm)
        tg = torch.from_numpy(gamma.copy()).requires_grad_()
        tb = torch.from_numpy(beta.copy()).requires_grad_()
        running_mean, running_var = torch.zeros(C), torch.ones(C)

        def torch_step():
            tx.grad = tg.grad = tb.grad = None
            out = F.batch_norm(tx, running_mean, running_var, tg, tb, True, 0.1, EPS)
            out.backward(tdy)
            return out

        out = torch_step()
        got = out.detach().permute(*np.argsort(perm)).numpy()
        assert np.abs(got - y).max() < 1e-4, "torch and fkeras disagree on y"
        assert (
            np.abs(tx.grad.permute(*np.argsort(perm)).numpy() - dx).max() < 1e-3 * np.abs(dx).max()
        ), "torch and fkeras disagree on dx"
        case["torch"] = torch_step
    return case, 8 * 4 * x.size


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    opts = parser.parse_args()
    rng = np.random.default_rng(0)
    print(
        f"fkeras ISA {_C.cpu_isa()}; torch {torch.__version__ if torch else 'not installed'}; "
        f"median of {opts.repeats} (shared machine: noisy)"
    )
    hdr = (
        f"{'case':28} {'th':>2} {'fwd ms':>7} {'bwd ms':>7} {'step ms':>8} {'GB/s':>6} "
        f"{'numpy ms':>9} {'torch ms':>9} {'GB/s':>6} {'ratio':>6}"
    )
    print(hdr + "\n" + "-" * len(hdr))
    for name, shape, layout in CASES:
        case, nbytes = make_case(shape, layout, rng)
        t_numpy = median_seconds(case["numpy"], repeats=max(3, opts.repeats // 3))
        for threads in opts.threads:
            _C.set_num_threads(threads)
            if torch is not None:
                torch.set_num_threads(threads)
            t_fwd, t_bwd = median_seconds(case["forward"], case["backward"], repeats=opts.repeats)
            steps = [case["step"]] + ([case["torch"]] if case["torch"] else [])
            times = median_seconds(*steps, repeats=opts.repeats)
            t_step = times[0] if case["torch"] else times
            line = (
                f"{name:28} {threads:>2} {t_fwd * 1e3:7.2f} {t_bwd * 1e3:7.2f} "
                f"{t_step * 1e3:8.2f} {nbytes / t_step / 1e9:6.1f} {t_numpy * 1e3:9.2f}"
            )
            if case["torch"] is not None:
                t_torch = times[1]
                line += (
                    f" {t_torch * 1e3:9.2f} {nbytes / t_torch / 1e9:6.1f} {t_torch / t_step:6.2f}"
                )
            print(line, flush=True)


if __name__ == "__main__":
    main()
