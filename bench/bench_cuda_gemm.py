"""CUDA GEMM family: GFLOP/s of fkeras._C_cuda.gemm (FP32 "highest" and TF32 "high") next to
cuBLAS (torch.matmul on the same GPU, when torch with CUDA is installed), square sizes
2048..8192, plus conv2d forward. Targets: FP32 >= 0.85x cuBLAS FP32, TF32 >= 0.7x cuBLAS TF32.

    python bench/bench_cuda_gemm.py [--repeats 10] [--sizes 2048 4096 8192]

Without fkeras._C_cuda or a GPU it prints why and exits 0. `cases(cuda)` yields
(name, flops, fn) rows for bench/bench_cuda.py.
"""

import argparse
import statistics
import time

import numpy as np


def _time(cuda, fn, repeats):
    fn()
    cuda.synchronize()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def cases(cuda, sizes=(2048, 4096, 8192)):
    """(name, flops, fn) for each kernel row; fn runs one call on the device stream."""
    rng = np.random.default_rng(0)
    for n in sizes:
        a = cuda.DeviceArray.from_host(rng.standard_normal((n, n)).astype(np.float32))
        b = cuda.DeviceArray.from_host(rng.standard_normal((n, n)).astype(np.float32))
        c = cuda.DeviceArray.from_host(np.zeros((n, n), np.float32))
        for prec in ("highest", "high"):
            def fn(a=a, b=b, c=c, n=n, prec=prec):
                cuda.set_matmul_precision(prec)
                cuda.gemm(c, a, b, n, n, n, False, False, 1.0, 0.0)
            yield f"gemm {n}^3 {'fp32' if prec == 'highest' else 'tf32'}", 2.0 * n**3, fn
    N, H, W, C, K = 32, 56, 56, 64, 64
    x = cuda.DeviceArray.from_host(rng.standard_normal((N, H, W, C)).astype(np.float32))
    w = cuda.DeviceArray.from_host(rng.standard_normal((3, 3, C, K)).astype(np.float32))
    y = cuda.DeviceArray.from_host(np.zeros((N, H, W, K), np.float32))
    yield ("conv2d_forward 32x56x56x64 3x3x64", 2.0 * N * H * W * K * 9 * C,
           lambda: cuda.conv2d_forward(y, x, w, None, N, H, W, C, K, 3, 3, H, W, 1, 1, 1, 1, 1,
                                       1, 1, 0, 0.0))


def _cublas(n, tf32, repeats):
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    torch.backends.cuda.matmul.allow_tf32 = tf32
    a, b = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
    torch.matmul(a, b)
    torch.cuda.synchronize()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        torch.matmul(a, b)
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    return 2.0 * n**3 / statistics.median(ts) / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--sizes", type=int, nargs="+", default=[2048, 4096, 8192])
    args = ap.parse_args()
    try:
        import fkeras._C_cuda as cuda
    except ImportError as e:
        print(f"fkeras._C_cuda not available: {e}")
        return
    if cuda.device_count() == 0:
        print(f"no GPU: {cuda.status()}")
        return
    print(f"{'kernel':40s} {'GFLOP/s':>10s} {'cuBLAS':>10s} {'ratio':>6s}")
    for name, flops, fn in cases(cuda, args.sizes):
        gf = flops / _time(cuda, fn, args.repeats) / 1e9
        ref = None
        if name.startswith("gemm"):
            ref = _cublas(int(name.split()[1].split("^")[0]), name.endswith("tf32"), args.repeats)
        tail = f"{ref:10.0f} {gf / ref:6.2f}" if ref else f"{'-':>10s} {'-':>6s}"
        print(f"{name:40s} {gf:10.0f} {tail}")
    cuda.set_matmul_precision("highest")


if __name__ == "__main__":
    main()
