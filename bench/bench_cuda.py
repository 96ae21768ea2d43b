"""CUDA kernels: GFLOP/s or GB/s per kernel, next to the measured copy bandwidth
(cudaMemcpy device to device) and cuBLAS (torch.matmul, when torch with CUDA is installed),
in the same run.

    python bench/bench_cuda.py [--repeats 20]

Without fkeras._C_cuda or a GPU it prints why and exits 0. Kernels not bound in this build are
listed as "not bound" (the families land one by one).
"""

import argparse
import sys

import numpy as np

from fkeras import _native
from fkeras.backend import codes


def _timer(cuda):
    """Seconds per call of fn, timed on the host around a synchronize (median of blocks)."""
    import statistics
    import time

    def run(fn, repeats):
        fn()
        cuda.synchronize()
        ts = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(5):
                fn()
            cuda.synchronize()
            ts.append((time.perf_counter() - t0) / 5)
        return statistics.median(ts)

    return run


def _specs(cuda):
    """(kernel name, label, make(): (fn, work, unit)) for each benchmarked kernel."""
    rng = np.random.default_rng(0)

    def arr(*shape, dtype=np.float32):
        return cuda.DeviceArray.from_host(rng.standard_normal(shape).astype(dtype))

    def gemm(M, N, K):
        def make():
            a, b, c = arr(M, K), arr(K, N), arr(M, N)
            return (lambda: cuda.gemm(c, a, b, M, N, K, False, False, 1.0, 0.0)), 2.0 * M * N * K, "GFLOP/s"
        make.dims = (M, N, K)
        return make

    def activation(n):
        def make():
            x, y = arr(n), arr(n)
            return (lambda: cuda.activation_forward(y, x, n, codes.RELU, 0.0)), 8.0 * n, "GB/s"
        return make

    def softmax(rows, cols):
        def make():
            x, y = arr(rows, cols), arr(rows, cols)
            return (lambda: cuda.softmax_forward(y, x, rows, cols)), 8.0 * rows * cols, "GB/s"
        return make

    def bias_add(rows, cols):
        def make():
            x, b, y = arr(rows, cols), arr(cols), arr(rows, cols)
            return (lambda: cuda.bias_add_forward(y, x, b, rows, cols)), 8.0 * rows * cols, "GB/s"
        return make

    def adam(n):
        def make():
            p, m, g, vh = arr(n), arr(n), arr(n), arr(1)
            v = cuda.DeviceArray.zeros((n,))
            return (lambda: cuda.adam_update(p, m, v, vh, g, n, 1e-3, 0.9, 0.999, 1e-7, 1, 0.0)), 28.0 * n, "GB/s"
        return make

    def dropout(n):
        def make():
            x, y, mask = arr(n), arr(n), arr(n)
            return (lambda: cuda.dropout_forward(y, mask, x, n, 0.5, 7)), 12.0 * n, "GB/s"
        return make

    def embedding(n, V, D):
        def make():
            idx = cuda.DeviceArray.from_host(rng.integers(0, V, n).astype(np.int32))
            table, y = arr(V, D), arr(n, D)
            return (lambda: cuda.embedding_forward(y, idx, table, n, V, D)), 8.0 * n * D, "GB/s"
        return make

    return [
        ("gemm", "gemm 1024^3", gemm(1024, 1024, 1024)),
        ("gemm", "gemm 4096^3", gemm(4096, 4096, 4096)),
        ("gemm", "gemm 256x4096x1024 (dense bwd-like)", gemm(256, 4096, 1024)),
        ("activation_forward", "relu 64M", activation(1 << 26)),
        ("softmax_forward", "softmax 32768x1000", softmax(32768, 1000)),
        ("bias_add_forward", "bias_add 65536x1024", bias_add(65536, 1024)),
        ("adam_update", "adam 16M", adam(1 << 24)),
        ("dropout_forward", "dropout 64M", dropout(1 << 26)),
        ("embedding_forward", "embedding 1M x 256 from 50k", embedding(1 << 20, 50000, 256)),
    ]


def _torch_matmul(M, N, K, repeats):
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    a = torch.randn(M, K, device="cuda")
    b = torch.randn(K, N, device="cuda")
    torch.backends.cuda.matmul.allow_tf32 = False

    import statistics
    import time

    torch.matmul(a, b)
    torch.cuda.synchronize()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(5):
            torch.matmul(a, b)
        torch.cuda.synchronize()
        ts.append((time.perf_counter() - t0) / 5)
    return 2.0 * M * N * K / statistics.median(ts) / 1e9


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args(argv)
    cuda = _native._C_cuda
    if cuda is None:
        print("bench_cuda: skipped: fkeras was built without CUDA (fkeras._C_cuda absent)")
        return 0
    if cuda.device_count() == 0:
        print(f"bench_cuda: skipped: {cuda.status()}")
        return 0
    info = cuda.device_info(0)
    print(f"device: {info['name']}, cc {info['compute_capability']}, "
          f"{info['total_memory'] / 2**30:.1f} GiB; archs {cuda.build_info['cuda_archs']}")
    copy = cuda.copy_bandwidth_gbs(1 << 28, 20)
    print(f"cudaMemcpy D2D: {copy:.0f} GB/s (read + write)")
    run = _timer(cuda)
    print(f"{'kernel':44s} {'rate':>12s}  {'vs reference':>14s}")
    for name, label, make in _specs(cuda):
        if not callable(getattr(cuda, name, None)):
            print(f"{label:44s} {'not bound':>12s}")
            continue
        fn, work, unit = make()
        rate = work / run(fn, args.repeats) / 1e9
        if unit == "GB/s":
            ref = f"{100 * rate / copy:5.0f}% of copy"
        else:
            blas = _torch_matmul(*make.dims, args.repeats)
            ref = f"cuBLAS {blas:8.0f}" if blas else "no torch CUDA"
        print(f"{label:44s} {rate:8.1f} {unit:8s} {ref}")
    stats = cuda.memory_stats()
    print(f"allocator: {stats['cuda_malloc_count']} cudaMalloc, peak "
          f"{stats['peak_allocated_bytes'] / 2**20:.0f} MiB, cache hits {stats['cache_hits']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
