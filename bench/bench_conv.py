"""Benchmark of the conv2d and pooling kernels: fkeras (fkeras._C) against PyTorch's CPU kernels.

Not a test. Validates fkeras against torch once per case, then times (median of --repeats
runs, fkeras and torch taking turns, see time_pair) conv2d forward (bias + relu fused),
backward-input and backward-weight, and max pooling 2x2 forward/backward, at 1 and 2 threads.
Torch runs on channels_last tensors (its fastest CPU layout for NHWC data, oneDNN underneath)
with aten.convolution_backward for the two gradients.
rate: GFLOP/s (conv) or GB/s (pooling), from the median. ratio: fkeras speed / torch speed from
the medians (> 1: fkeras faster); r(min): the same from the fastest runs, which a busy shared
machine disturbs less. gemm ms / x gemm: the kernel with the direct convolution switched off
(FKERAS_CONV_DIRECT=0, the im2col + GEMM path) and fkeras's speedup over it (medians).

--cpu-time times with process CPU time instead of wall time (1 thread only: a thread that waits
for another would count nothing). A loaded machine disturbs it much less than wall time, so it is
the figure to trust for 1-thread ratios there.

Last table (inference, CNN layer 2 + MaxPooling2D): conv2d_forward_maxpool2d (the convolution
with bias + relu and a 2x2 max pooling in one pass) against conv2d_forward then
maxpool2d_forward without indices, then with indices (what a training forward runs), and torch
(convolution + relu + max_pool2d under no_grad, channels_last).

Usage: python bench/bench_conv.py [--repeats 7] [--threads 1 2] [--quick] [--cpu-time] [--no-gemm]
"""

import argparse
import os
import statistics
import time

# numpy's OpenBLAS threads are never used here, but an idle pool can still spin on the cores
# that the timed kernels need.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
from fkeras import _C
from fkeras.backend import codes
from fkeras.ops.conv_utils import conv_output_size_and_padding

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # the fkeras columns still print
    torch = None

CONV_CASES = [  # (name, N, H, W, C, K, R, S, padding)
    ("64x28x28 32->64 3x3", 64, 28, 28, 32, 64, 3, 3, "same"),
    ("32x56x56 64->64 3x3", 32, 56, 56, 64, 64, 3, 3, "same"),
    ("cnn1 64x28x28 1->32", 64, 28, 28, 1, 32, 3, 3, "valid"),  # bench_fit's CNN, exactly
    ("cnn2 64x26x26 32->64", 64, 26, 26, 32, 64, 3, 3, "valid"),
]
POOL_CASES = [("64x28x28x64 max 2x2", 64, 28, 28, 64), ("32x56x56x64 max 2x2", 32, 56, 56, 64)]


CLOCK = time.perf_counter


def time_pair(ours, theirs, repeats, rounds=3):
    """Median and min seconds of ours and theirs (theirs None: not timed). Each takes turns of
    `repeats // rounds` runs, so that a busy spell on the shared machine hits both alike, with a
    pause between turns: torch's OpenMP workers spin for a while after each call and would
    otherwise steal a core from the next fkeras run."""
    fns = [fn for fn in (ours, theirs) if fn is not None]
    times = [[] for _ in fns]
    per_turn = max(1, -(-repeats // rounds))
    for _ in range(rounds):
        for fn, ts in zip(fns, times):
            time.sleep(0.05)
            fn()  # warm-up
            for _ in range(per_turn):
                t0 = CLOCK()
                fn()
                ts.append(CLOCK() - t0)
    stats = [(statistics.median(ts), min(ts)) for ts in times]
    return stats[0], (stats[1] if theirs is not None else None)


def set_threads(n):
    _C.set_num_threads(n)
    if torch is not None:
        torch.set_num_threads(n)


def conv_case(N, H, W, C, K, R, S, padding, rng):
    """Buffers and callables for one stride-1 conv: {op: (fkeras_fn, torch_fn)}."""
    P, pt = conv_output_size_and_padding(H, R, 1, 1, padding)
    Q, pl = conv_output_size_and_padding(W, S, 1, 1, padding)
    args = (N, H, W, C, K, R, S, P, Q, 1, 1, 1, 1, pt, pl, 1)
    x = rng.standard_normal((N, H, W, C), dtype=np.float32)
    w = rng.standard_normal((R, S, C, K), dtype=np.float32) / np.float32(np.sqrt(R * S * C))
    b = rng.standard_normal(K, dtype=np.float32)
    dy = rng.standard_normal((N, P, Q, K), dtype=np.float32)
    y, dx, dw = np.empty_like(dy), np.empty_like(x), np.empty_like(w)
    ops = {
        "forward": lambda: _C.conv2d_forward(y, x, w, b, *args, codes.RELU, 0.0),
        "backward_input": lambda: _C.conv2d_backward_input(dx, dy, w, *args),
        "backward_weight": lambda: _C.conv2d_backward_weight(dw, dy, x, *args),
    }
    ours = {"forward": y, "backward_input": dx, "backward_weight": dw}
    theirs = {k: None for k in ops}
    if torch is not None:
        assert padding == "valid" or (pt == (R - 1) // 2 and pl == (S - 1) // 2), \
            "symmetric padding expected"
        tx = torch.from_numpy(x).permute(0, 3, 1, 2)  # NCHW view of NHWC memory: channels_last
        tw = torch.from_numpy(w).permute(3, 2, 0, 1).contiguous(memory_format=torch.channels_last)
        tb, tdy = torch.from_numpy(b), torch.from_numpy(dy).permute(0, 3, 1, 2)
        conv_args = ([1, 1], [pt, pl], [1, 1], False, [0, 0], 1)

        def t_forward():
            return torch.relu_(F.conv2d(tx, tw, tb, 1, (pt, pl)))

        def t_grad(mask):
            return torch.ops.aten.convolution_backward(tdy, tx, tw, None, *conv_args, mask)

        theirs = {
            "forward": t_forward,
            "backward_input": lambda: t_grad([True, False, False])[0],
            "backward_weight": lambda: t_grad([False, True, False])[1],
        }
        with torch.no_grad():  # validate once
            for op, fn in ops.items():
                fn()
                want = theirs[op]()
                want = want.permute(0, 2, 3, 1) if want.dim() == 4 and op != "backward_weight" \
                    else want.permute(2, 3, 1, 0)
                err = np.abs(ours[op] - want.numpy()).max() / (np.abs(want.numpy()).max() + 1e-30)
                assert err < 1e-4, f"{op}: fkeras differs from torch (relative error {err:.2e})"
    flops = 2.0 * N * P * Q * K * R * S * C
    return ops, theirs, flops


def pool_case(N, H, W, C, rng):
    P, Q = H // 2, W // 2
    x = rng.standard_normal((N, H, W, C), dtype=np.float32)
    dy = rng.standard_normal((N, P, Q, C), dtype=np.float32)
    y, idx, dx = np.empty_like(dy), np.empty(dy.shape, np.int64), np.empty_like(x)
    pargs = (N, H, W, C, P, Q, 2, 2, 2, 2, 0, 0)
    ops = {
        "forward": lambda: _C.maxpool2d_forward(y, idx, x, *pargs),
        "backward": lambda: _C.maxpool2d_backward(dx, dy, idx, N, H, W, C, P, Q),
    }
    theirs = {k: None for k in ops}
    if torch is not None:
        tx = torch.from_numpy(x).permute(0, 3, 1, 2)
        tdy = torch.from_numpy(dy).permute(0, 3, 1, 2)
        _, tidx = torch.ops.aten.max_pool2d_with_indices(tx, [2, 2], [2, 2])
        theirs = {
            "forward": lambda: torch.ops.aten.max_pool2d_with_indices(tx, [2, 2], [2, 2]),
            "backward": lambda: torch.ops.aten.max_pool2d_with_indices_backward(
                tdy, tx, [2, 2], [2, 2], [0, 0], [1, 1], False, tidx),
        }
        ops["forward"]()
        ty, _ = theirs["forward"]()
        assert np.array_equal(y, ty.permute(0, 2, 3, 1).numpy()), "maxpool differs from torch"
    # bytes: forward reads x, writes y and int64 indices; backward reads dy + indices, writes dx
    nbytes = {"forward": 4 * x.size + 12 * y.size, "backward": 12 * dy.size + 4 * x.size}
    return ops, theirs, nbytes


def fused_case(N, H, W, C, K, rng):
    """CNN layer 2 + 2x2 max pooling for inference: fkeras fused / separate / with indices,
    and torch's three ops."""
    P, Q = H - 2, W - 2
    x = rng.standard_normal((N, H, W, C), dtype=np.float32)
    w = (rng.standard_normal((3, 3, C, K)) * 0.1).astype(np.float32)
    b = rng.standard_normal(K).astype(np.float32)
    y, full = np.empty((N, P // 2, Q // 2, K), np.float32), np.empty((N, P, Q, K), np.float32)
    idx = np.empty(y.shape, np.int64)
    cargs = (N, H, W, C, K, 3, 3, P, Q, 1, 1, 1, 1, 0, 0, 1, codes.RELU, 0.0)
    pargs = (N, P, Q, K, P // 2, Q // 2, 2, 2, 2, 2, 0, 0)

    def separate(indices):
        def run():
            _C.conv2d_forward(full, x, w, b, *cargs)
            _C.maxpool2d_forward(y, indices, full, *pargs)
        return run

    fns = {"fused": lambda: _C.conv2d_forward_maxpool2d(y, x, w, b, *cargs, 2, 2),
           "separate": separate(None), "with indices": separate(idx)}
    theirs = None
    if torch is not None:
        tx = torch.from_numpy(x).permute(0, 3, 1, 2)
        tw = torch.from_numpy(np.ascontiguousarray(w.transpose(3, 2, 0, 1))).contiguous(
            memory_format=torch.channels_last)
        tb = torch.from_numpy(b)

        def theirs():
            with torch.no_grad():
                return F.max_pool2d(torch.relu(F.conv2d(tx, tw, tb)), 2)

        fns["fused"]()
        err = np.abs(y - theirs().permute(0, 2, 3, 1).numpy()).max()
        assert err < 1e-3 * (np.abs(y).max() + 1), f"fused conv + pool differs from torch ({err})"
    return fns, theirs, 2.0 * N * P * Q * K * 9 * C


def row(name, op, threads, ours, theirs, work, gemm=None):
    """One table line; ours/theirs/gemm are (median, min) seconds, work in FLOP or bytes."""
    text = f"{name:22} {op:16} {threads:>2} {ours[0] * 1e3:9.2f} {work / ours[0] / 1e9:8.1f}"
    if theirs is not None:
        text += (f" {theirs[0] * 1e3:9.2f} {work / theirs[0] / 1e9:8.1f} "
                 f"{theirs[0] / ours[0]:6.2f} {theirs[1] / ours[1]:6.2f}")
    if gemm is not None:
        text += f" {gemm[0] * 1e3:9.2f} {gemm[0] / ours[0]:6.2f}"
    return text


def gemm_path(fn):
    """fn with the direct convolution switched off (FKERAS_CONV_DIRECT=0: the im2col + GEMM
    path, the 'before' of the direct path)."""
    def run():
        os.environ["FKERAS_CONV_DIRECT"] = "0"
        try:
            fn()
        finally:
            os.environ.pop("FKERAS_CONV_DIRECT")
    return run


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--quick", action="store_true", help="first conv case only, no pooling")
    parser.add_argument("--cpu-time", action="store_true",
                        help="process CPU time instead of wall time (1 thread only)")
    parser.add_argument("--no-gemm", action="store_true",
                        help="skip the 'gemm' columns (the kernels with the direct convolution "
                             "off)")
    opts = parser.parse_args()
    if opts.cpu_time:
        global CLOCK
        if opts.threads != [1]:
            parser.error("--cpu-time measures 1 thread only: add --threads 1")
        CLOCK = time.process_time
    rng = np.random.default_rng(0)
    print(f"fkeras ISA {_C.cpu_isa()}; torch {torch.__version__ if torch else 'not installed'}; "
          f"median of {opts.repeats} (shared machine: noisy); "
          f"{'process CPU time' if opts.cpu_time else 'wall time'}")
    hdr = (f"{'case':22} {'op':16} {'th':>2} {'ms':>9} {'rate':>8} {'torch ms':>9} "
           f"{'rate':>8} {'ratio':>6} {'r(min)':>6} {'gemm ms':>9} {'x gemm':>6}")
    print(hdr + "\n" + "-" * len(hdr))
    conv_cases = CONV_CASES[:1] if opts.quick else CONV_CASES
    for name, *dims in conv_cases:
        ops, theirs, flops = conv_case(*dims, rng)
        for threads in opts.threads:
            set_threads(threads)
            for op, fn in ops.items():
                if torch is not None:
                    with torch.no_grad():
                        ours, ref = time_pair(fn, theirs[op], opts.repeats)
                else:
                    ours, ref = time_pair(fn, None, opts.repeats)
                gemm = None
                if not opts.no_gemm:
                    _, gemm = time_pair(fn, gemm_path(fn), opts.repeats)
                print(row(name, op, threads, ours, ref, flops, gemm), flush=True)
    if not opts.quick:
        print("(pooling rows: rate in GB/s)")
        for name, *dims in POOL_CASES:
            ops, theirs, nbytes = pool_case(*dims, rng)
            for threads in opts.threads:
                set_threads(threads)
                for op, fn in ops.items():
                    ours, ref = time_pair(fn, theirs[op], opts.repeats)
                    print(row(name, op, threads, ours, ref, nbytes[op]), flush=True)
        print("(inference, cnn2 + relu + maxpool 2x2: fkeras fused; the torch columns: torch's "
              "conv + relu + max_pool2d; the gemm columns: fkeras unfused)")
        fns, theirs, flops = fused_case(64, 26, 26, 32, 64, rng)
        for threads in opts.threads:
            set_threads(threads)
            ours, ref = time_pair(fns["fused"], theirs, opts.repeats)
            for other in ("separate", "with indices"):
                _, unfused = time_pair(fns["fused"], fns[other], opts.repeats)
                print(row("cnn2 + maxpool", f"vs {other}", threads, ours, ref, flops, unfused),
                      flush=True)


if __name__ == "__main__":
    main()
