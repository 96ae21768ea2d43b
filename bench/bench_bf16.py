"""bf16 products against fp32 at kernel level, in one process (not a test).

    python bench/bench_bf16.py [--threads 1] [--repeats 5] [--only gemm,conv,rnn,paths]

For each case the same call runs with the bf16-products flag off and on
(fkeras._C.set_gemm_bf16), taking turns, and the best of `--repeats` timed blocks of >= 50 ms
is kept (the machine is shared: the best sample is the one least disturbed). Cases: square
GEMMs and small-M GEMMs (where rounding B costs more than it saves); the benchmark CNN's conv1
and conv2 (forward, backward-input, backward-weight; both take their automatic path: the
direct convolution, fp32 or bf16, where it serves the shape); LSTM and GRU(reset_after)
sequences of bench_fit's LSTM workload (forward, then backward on the saved state).
Prints fp32 and bf16 times and the speed-up fp32 / bf16. Needs a CPU with avx512_bf16.
`paths`: under bf16, the direct convolution (FKERAS_CONV_DIRECT=1) against im2col + bf16 GEMM
(=0) on 3x3 stride-1 shapes around the automatic choice's limits (what it rests on).
"""

import argparse
import os
import sys
import time

import numpy as np
from fkeras import _C
from fkeras.backend import codes


def best_seconds(fn, repeats):
    fn()
    t0 = time.perf_counter()
    fn()
    inner = max(1, int(0.05 / max(time.perf_counter() - t0, 1e-7)))
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        best = min(best, (time.perf_counter() - t0) / inner)
    return best


def compare(label, fn, repeats, flops=None):
    times = []
    for flag in (False, True):
        _C.set_gemm_bf16(flag)
        try:
            times.append(best_seconds(fn, repeats))
        finally:
            _C.set_gemm_bf16(False)
    rate = "" if flops is None else "  GFLOP/s %7.1f -> %7.1f" % tuple(flops / t / 1e9
                                                                       for t in times)
    print(f"{label:>34}: {1e3 * times[0]:8.3f} -> {1e3 * times[1]:8.3f} ms  "
          f"x{times[0] / times[1]:5.2f}{rate}", flush=True)


def gemm_cases(rng, repeats):
    for M, N, K in [(n, n, n) for n in (64, 256, 512, 1024, 2048)] + [
            (1, 512, 784), (8, 128, 128), (32, 64, 64), (128, 784, 512)]:
        A = rng.standard_normal((M, K)).astype(np.float32)
        B = rng.standard_normal((K, N)).astype(np.float32)
        C = np.empty((M, N), np.float32)
        compare(f"gemm {M}x{N}x{K}", lambda: _C.gemm(C, A, B, M, N, K, False, False, 1.0, 0.0),
                repeats, 2.0 * M * N * K)


def _conv3x3_operands(rng, N, H, W, C, K):
    """The kernel arguments and operands of a 'valid' 3x3 stride-1 convolution."""
    P, Q = H - 2, W - 2
    args = (N, H, W, C, K, 3, 3, P, Q, 1, 1, 1, 1, 0, 0, 1)
    x = rng.standard_normal((N, H, W, C)).astype(np.float32)
    w = rng.standard_normal((3, 3, C, K)).astype(np.float32)
    dy = rng.standard_normal((N, P, Q, K)).astype(np.float32)
    return args, x, w, dy, np.empty_like(dy), np.empty_like(x), np.empty_like(w)


def conv_cases(rng, repeats):
    # 'valid' 3x3, stride 1: the benchmark CNN's two convolutions at batch 64.
    for name, (N, H, W, C, K) in (("conv1", (64, 28, 28, 1, 32)), ("conv2", (64, 26, 26, 32, 64))):
        args, x, w, dy, y, dx, dw = _conv3x3_operands(rng, N, H, W, C, K)
        flops = 2.0 * N * (H - 2) * (W - 2) * K * 9 * C
        compare(f"{name} forward", lambda: _C.conv2d_forward(y, x, w, None, *args, codes.RELU,
                                                               0.0), repeats, flops)
        compare(f"{name} backward_input",
                lambda: _C.conv2d_backward_input(dx, dy, w, *args), repeats, flops)
        compare(f"{name} backward_weight",
                lambda: _C.conv2d_backward_weight(dw, dy, x, *args), repeats, flops)


def conv_path_cases(rng, repeats):
    # (N, H, W, C, K), 'valid' 3x3 stride 1: the CNN's convolutions, then C and K from 3 to 256.
    for N, H, W, C, K in ((64, 28, 28, 1, 32), (64, 26, 26, 32, 64), (32, 34, 34, 3, 64),
                          (32, 18, 18, 32, 32), (32, 18, 18, 16, 16), (32, 30, 30, 64, 64),
                          (16, 30, 30, 64, 128), (8, 16, 16, 128, 128), (8, 9, 9, 256, 256)):
        args, x, w, dy, y, dx, dw = _conv3x3_operands(rng, N, H, W, C, K)
        for name, fn in (("forward", lambda: _C.conv2d_forward(y, x, w, None, *args,
                                                                codes.LINEAR, 0.0)),
                         ("backward_input", lambda: _C.conv2d_backward_input(dx, dy, w, *args)),
                         ("backward_weight",
                          lambda: _C.conv2d_backward_weight(dw, dy, x, *args))):
            times = []
            for direct in ("0", "1"):
                os.environ["FKERAS_CONV_DIRECT"] = direct
                _C.set_gemm_bf16(True)
                try:
                    times.append(best_seconds(fn, repeats))
                finally:
                    _C.set_gemm_bf16(False)
            os.environ.pop("FKERAS_CONV_DIRECT", None)
            print(f"{f'bf16 {N}x{H}x{W}x{C}->{K} {name}':>44}: gemm {1e3 * times[0]:8.3f}"
                  f" direct {1e3 * times[1]:8.3f} ms  direct x{times[0] / times[1]:5.2f}",
                  flush=True)


def rnn_cases(rng, repeats):
    N, T, F, U = 64, 50, 32, 128  # bench_fit's "lstm": LSTM(128) over 50 steps of 32 features
    f32 = lambda *s: (rng.standard_normal(s) * 0.3).astype(np.float32)  # noqa: E731
    x, h0, c0 = f32(N, T, F), f32(N, U), f32(N, U)
    for fam, G in (("lstm", 4), ("gru", 3)):
        w, rw = f32(F, G * U), f32(U, G * U)
        hs, hf, cf, cs, hp = (np.empty((N, T, U), np.float32), np.empty((N, U), np.float32),
                              np.empty((N, U), np.float32), np.empty((N, T, U), np.float32),
                              np.empty((N, T, U), np.float32))
        gates = np.empty((N, T, G * U), np.float32)
        dhs = f32(N, T, U)
        dx, dh0, dc0 = np.empty_like(x), np.empty_like(h0), np.empty_like(c0)
        dw, drw = np.empty_like(w), np.empty_like(rw)
        if fam == "lstm":
            b, db = f32(G * U), np.empty(G * U, np.float32)
            fwd = lambda: _C.lstm_sequence_forward(hs, hf, cf, gates, cs, x, h0, c0, w, rw, b,  # noqa: E731
                                                   N, T, F, U, False, codes.TANH, codes.SIGMOID)
            bwd = lambda: _C.lstm_sequence_backward(dx, dh0, dc0, dw, drw, db, dhs, None, None,  # noqa: E731
                                                    gates, cs, hs, x, h0, c0, w, rw, N, T, F, U,
                                                    False, codes.TANH, codes.SIGMOID)
        else:
            b, db = f32(2, G * U), np.empty((2, G * U), np.float32)
            fwd = lambda: _C.gru_sequence_forward(hs, hf, gates, hp, x, h0, w, rw, b, N, T, F,  # noqa: E731
                                                  U, False, True, codes.TANH, codes.SIGMOID)
            bwd = lambda: _C.gru_sequence_backward(dx, dh0, dw, drw, db, dhs, None, gates, hp,  # noqa: E731
                                                   hs, x, h0, w, rw, N, T, F, U, False, True,
                                                   codes.TANH, codes.SIGMOID)
        flops = 2.0 * N * T * (F + U) * G * U
        compare(f"{fam} forward N{N} T{T} F{F} U{U}", fwd, repeats, flops)
        fwd()
        compare(f"{fam} backward", bwd, repeats, 2 * flops)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--only", default="gemm,conv,rnn", help="of gemm,conv,rnn,paths")
    args = p.parse_args()
    only = args.only.split(",")
    if not _C.gemm_bf16_native():
        sys.exit("no VDPBF16PS here (fkeras._C.gemm_bf16_native() is False): nothing to compare")
    _C.set_num_threads(args.threads)
    os.environ.pop("FKERAS_CONV_DIRECT", None)
    print(f"fp32 -> bf16 products, {args.threads} thread(s), best of {args.repeats} blocks")
    rng = np.random.default_rng(0)
    for name, cases in (("gemm", gemm_cases), ("conv", conv_cases), ("rnn", rnn_cases),
                        ("paths", conv_path_cases)):
        if name in only:
            cases(rng, args.repeats)


if __name__ == "__main__":
    main()
