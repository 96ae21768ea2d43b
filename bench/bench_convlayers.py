"""Benchmark (not a test): the N-D convolution, pooling and upsampling layers, forward +
backward (input and weight gradients), fkeras vs PyTorch eager (if importable), at 1 and 2
threads. Each row is validated once against torch (max abs difference printed), then timed:
median of --repeats after a warm-up. The machine is shared: read the figures as indicative.

Usage: python bench/bench_convlayers.py [--repeats 5] [--threads 1 2]
"""

import argparse
import time

import numpy as np

import fkeras
from fkeras import _native, layers

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # torch is optional
    torch = None


def _cases():
    """(name, fkeras layer, input shape (channels last), torch fn(x_nchw, weights) or None)."""
    return [
        ("DepthwiseConv2D 3x3 56x56x64", layers.DepthwiseConv2D(3, padding="same",
                                                               use_bias=False),
         (8, 56, 56, 64),
         lambda x, w: F.conv2d(x, w[0].permute(2, 3, 0, 1).reshape(64, 1, 3, 3), padding=1,
                               groups=64)),
        ("Conv3D 3x3x3 16x32x32x8->16", layers.Conv3D(16, 3, padding="same", use_bias=False),
         (4, 16, 32, 32, 8),
         lambda x, w: F.conv3d(x, w[0].permute(4, 3, 0, 1, 2), padding=1)),
        ("Conv2DTranspose 3x3 s2 28x28x64->32",
         layers.Conv2DTranspose(32, 3, strides=2, padding="same", use_bias=False),
         (8, 28, 28, 64),
         # Keras's 'same' here: output o = 2 p + r (no leading crop), the first 2 L of torch's
         # full-size output.
         lambda x, w: F.conv_transpose2d(x, w[0].permute(3, 2, 0, 1), stride=2)[:, :, :56, :56]),
        ("Conv1D k5 causal 256x64->64", layers.Conv1D(64, 5, padding="causal",
                                                      use_bias=False),
         (16, 256, 64),
         lambda x, w: F.conv1d(F.pad(x, (4, 0)), w[0].permute(2, 1, 0))),
        ("MaxPooling3D 2 16x32x32x16", layers.MaxPooling3D(2), (4, 16, 32, 32, 16),
         lambda x, w: F.max_pool3d(x, 2)),
        ("UpSampling2D bilinear 56x56x64", layers.UpSampling2D(interpolation="bilinear"),
         (8, 56, 56, 64),
         lambda x, w: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)),
    ]


def _median_time(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def _fkeras_step(layer, x, cot):
    def run():
        with fkeras.GradientTape() as tape:
            tape.watch(x)
            y = layer(x)
        return y, tape.gradient(y, [x] + layer.trainable_weights, output_gradients=cot)
    return run


def _torch_step(fn, x, weights, cot):
    xt = torch.tensor(np.moveaxis(x, -1, 1).copy(), requires_grad=True)
    wt = [torch.tensor(w, requires_grad=True) for w in weights]
    ct = torch.tensor(np.moveaxis(cot, -1, 1).copy())

    def run():
        y = fn(xt, wt)
        grads = torch.autograd.grad(y, [xt] + wt, ct)
        return y, grads
    return run


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    opts = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'layer (fwd + bwd)':36} thr  fkeras ms   torch ms  fkeras/torch  max|diff|")
    for name, layer, shape, tfn in _cases():
        x = rng.standard_normal(shape).astype(np.float32)
        y = np.asarray(layer(x))
        cot = rng.standard_normal(y.shape).astype(np.float32)
        weights = [np.asarray(w) for w in layer.trainable_weights]
        f_step = _fkeras_step(layer, x, cot)
        t_step = _torch_step(tfn, x, weights, cot) if torch is not None else None
        diff = float("nan")
        if t_step is not None:
            diff = float(np.abs(np.moveaxis(t_step()[0].detach().numpy(), 1, -1) - y).max())
        for threads in opts.threads:
            _native._C.set_num_threads(threads)
            tf = _median_time(f_step, opts.repeats)
            tt = float("nan")
            if t_step is not None:
                torch.set_num_threads(threads)
                tt = _median_time(t_step, opts.repeats)
            print(f"{name:36} {threads:>3} {tf * 1e3:10.2f} {tt * 1e3:10.2f} "
                  f"{tf / tt:13.2f} {diff:10.2e}")


if __name__ == "__main__":
    main()
