"""GEMM benchmark: fkeras._C.gemm against NumPy (OpenBLAS) and, if importable, PyTorch.

Not a test. For each library and thread count a worker subprocess is started (thread counts are
fixed before the libraries load: OPENBLAS_NUM_THREADS for NumPy, fkeras._C.set_num_threads,
torch.set_num_threads; the workers that do not measure NumPy keep OpenBLAS at one thread, so
its spinning idle threads do not steal a core). Every worker validates each case once, then
times it: a warm-up, then `--repeats` samples of at least ~20 ms each, and reports GFLOP/s.
The workers run in `--rounds` interleaved rounds and the table gives the median over all
samples, so slow drift on a shared machine hits every library alike.

Cases are M x N x K with C = op(A) @ op(B): square sizes, and the Dense training shapes in the
three layouts a Dense layer uses (nn: forward x @ W; nt: dx = dz @ W^T; tn: dW = x^T @ dz).

--bf16 adds "fk-bf16": fkeras._C.gemm with the bf16-products flag (set_gemm_bf16: operands
rounded to bf16, fp32 accumulation, VDPBF16PS), validated against the product of the rounded
operands, and a bf16/fk column (its speed-up over fp32 fkeras). --peak first measures one
core's register-only multiply-add peak, fp32 FMA and VDPBF16PS (fkeras._C._peak_loop_for_bench).

--busy starts one busy-looping process (pinned to CPU 0 with --busy-pin) for the whole run and
reports how fkeras at 2 threads holds up against fkeras at 1 thread and torch at 2 threads.

Usage:
    python bench/bench_gemm.py                       # full table, 1 and 2 threads
    python bench/bench_gemm.py --quick --rounds 1    # a few cases
    python bench/bench_gemm.py --busy --busy-pin     # under a busy neighbour
    python bench/bench_gemm.py --bf16 --peak --threads 1,2 --libs fkeras,fk-bf16
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

SQUARE = [64, 128, 256, 512, 1024, 2048]
TRAINING = [(128, 784, 512), (128, 512, 784), (784, 128, 512), (64, 160, 512), (64, 9216, 128)]
# The benchmark CNN's conv2 (3x3, 32 -> 64 channels) as im2col GEMMs of 4 images' 24x24 output
# pixels: forward cols @ w (nn), dcols = dy @ w^T (nt), dw = cols^T @ dy (tn).
CNN = [(2304, 64, 288)]


def cases(quick):
    out = [(n, n, n, "nn") for n in ([64, 256, 1024] if quick else SQUARE)]
    for M, N, K in TRAINING[:2] if quick else TRAINING + CNN:
        out += [(M, N, K, v) for v in ("nn", "nt", "tn")]
    return out


# ---- worker side ------------------------------------------------------------------------------


def make_operands(np, M, N, K, variant, rng):
    A = rng.standard_normal((K, M) if variant == "tn" else (M, K)).astype(np.float32)
    B = rng.standard_normal((N, K) if variant == "nt" else (K, N)).astype(np.float32)
    return A, B


def runner(lib, np, M, N, K, variant, A, B, C):
    ta, tb = variant == "tn", variant == "nt"
    if lib in ("fkeras", "fk-bf16"):
        from fkeras import _C

        return lambda: _C.gemm(C, A, B, M, N, K, ta, tb, 1.0, 0.0)
    a = A.T if ta else A
    b = B.T if tb else B
    if lib == "numpy":
        return lambda: np.matmul(a, b, out=C)
    import torch

    ta_, tb_, tc_ = torch.from_numpy(A), torch.from_numpy(B), torch.from_numpy(C)
    at = ta_.t() if ta else ta_
    bt = tb_.t() if tb else tb_
    return lambda: torch.matmul(at, bt, out=tc_)


def round_bf16(np, X):
    """float32 -> nearest bf16 (ties to even) as float32 (finite inputs)."""
    u = X.view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)


def validate(np, fn, A, B, C, variant, bf16=False):
    fn()
    if bf16:  # the product of the rounded operands, accumulated in fp32
        A, B = round_bf16(np, A), round_bf16(np, B)
    a = A.T.astype(np.float64) if variant == "tn" else A.astype(np.float64)
    b = B.T.astype(np.float64) if variant == "nt" else B.astype(np.float64)
    t = np.random.default_rng(1).standard_normal(C.shape[1])
    want = a @ (b @ t)
    bound = np.abs(a) @ (np.abs(b) @ np.abs(t))
    err = np.abs(C.astype(np.float64) @ t - want)
    if not (err <= 1e-5 * bound + 1e-6).all():
        raise SystemExit(f"validation failed: max error {err.max():.3g}")


def worker(args):
    import numpy as np

    if args.lib in ("fkeras", "fk-bf16"):
        from fkeras import _C

        _C.set_num_threads(args.threads)
        _C.set_gemm_bf16(args.lib == "fk-bf16")
    elif args.lib == "torch":
        import torch

        torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    results = {}
    for M, N, K, variant in cases(args.quick):
        A, B = make_operands(np, M, N, K, variant, rng)
        C = np.empty((M, N), np.float32)
        fn = runner(args.lib, np, M, N, K, variant, A, B, C)
        validate(np, fn, A, B, C, variant, bf16=args.lib == "fk-bf16")
        flops = 2.0 * M * N * K
        t0 = time.perf_counter()
        fn()
        once = max(time.perf_counter() - t0, 1e-7)
        inner = max(1, int(0.02 / once))
        for _ in range(inner):  # warm-up
            fn()
        samples = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            samples.append(flops * inner / (time.perf_counter() - t0) / 1e9)
        results[f"{M}x{N}x{K}:{variant}"] = samples
    print(json.dumps(results))


# ---- driver side ------------------------------------------------------------------------------


def libraries(bf16):
    libs = ["fkeras", "numpy"]
    if bf16:
        from fkeras import _C

        if _C.gemm_bf16_native():
            libs.insert(1, "fk-bf16")
        else:
            print("note: no VDPBF16PS here (gemm_bf16_native() is False): no fk-bf16 column")
    try:
        import torch  # noqa: F401

        libs.append("torch")
    except ImportError:
        pass
    return libs


def measure_peak(repeats=5, seconds=0.05):
    """One core's register-only multiply-add peak in GFLOP/s: {"fp32": ..., "bf16": ...}."""
    from fkeras import _C

    out = {}
    for name, bf16 in (("fp32", False), ("bf16", True)):
        if bf16 and not _C.cpu_features()["avx512_bf16"]:
            continue
        t, f = _C._peak_loop_for_bench(bf16, 1000)
        iters = max(1000, int(1000 * seconds / max(t, 1e-9)))
        out[name] = max(f / t for t, f in (_C._peak_loop_for_bench(bf16, iters)
                                           for _ in range(repeats))) / 1e9
    return out


def run_worker(lib, threads, args):
    env = dict(os.environ)
    env["OPENBLAS_NUM_THREADS"] = str(threads if lib == "numpy" else 1)
    env["OMP_NUM_THREADS"] = str(threads)
    env["FKERAS_NUM_THREADS"] = str(threads)
    cmd = [sys.executable, __file__, "--worker", "--lib", lib, "--threads", str(threads),
           "--repeats", str(args.repeats)] + (["--quick"] if args.quick else [])
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def cpu_busy_fraction(seconds=0.5):
    """Fraction of all CPUs busy over `seconds`, from /proc/stat (Linux)."""

    def sample():
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
        return sum(fields), fields[3] + fields[4]  # total, idle + iowait

    t0, i0 = sample()
    time.sleep(seconds)
    t1, i1 = sample()
    return 1.0 - (i1 - i0) / max(1, t1 - t0)


def wait_quiet(timeout):
    """Waits (up to timeout seconds) until other processes leave the CPUs nearly idle."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if cpu_busy_fraction() < 0.1:
                return True
        except OSError:
            return False
    return False


def start_busy(pin):
    code = "import os,sys\nif sys.argv[1] == '1': os.sched_setaffinity(0, {0})\nwhile True: pass"
    return subprocess.Popen([sys.executable, "-c", code, "1" if pin else "0"])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    p.add_argument("--repeats", type=int, default=5, help="timed samples per case and round")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds of all workers")
    p.add_argument("--quick", action="store_true", help="a few cases only")
    p.add_argument("--wait-quiet", type=float, default=0.0, metavar="SECONDS",
                   help="before each worker, wait up to SECONDS for idle CPUs (shared machines)")
    p.add_argument("--bf16", action="store_true", help="add fkeras with bf16 products")
    p.add_argument("--peak", action="store_true", help="measure the fp32 / bf16 core peaks")
    p.add_argument("--libs", help="comma-separated subset of the libraries to run")
    p.add_argument("--best", action="store_true",
                   help="report the best sample, not the median (a loaded shared machine)")
    p.add_argument("--busy", action="store_true", help="run beside one busy-looping process")
    p.add_argument("--busy-pin", action="store_true", help="pin the busy process to CPU 0")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--lib", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        args.threads = int(args.threads)
        return worker(args)

    threads = [int(t) for t in args.threads.split(",")]
    if args.busy and 2 not in threads:
        threads.append(2)
    libs = libraries(args.bf16)
    if args.libs:
        libs = [lib for lib in libs if lib == "fkeras" or lib in args.libs.split(",")]
    if args.peak:
        peak = measure_peak()
        print("one core, register-only loop: " + ", ".join(
            f"{k} {v:.1f} GFLOP/s" for k, v in peak.items()))
    busy = start_busy(args.busy_pin) if args.busy else None
    samples = {}
    try:
        for _ in range(args.rounds):
            for t in threads:
                for lib in libs:
                    if args.wait_quiet and not busy:
                        wait_quiet(args.wait_quiet)
                    for case, s in run_worker(lib, t, args).items():
                        samples.setdefault((case, t, lib), []).extend(s)
    finally:
        if busy:
            busy.kill()
            busy.wait()
    stat = max if args.best else statistics.median
    med = {k: stat(v) for k, v in samples.items()}
    spread = {k: (min(v), max(v)) for k, v in samples.items()}

    print(f"GFLOP/s, {'best' if args.best else 'median'} of {args.rounds} rounds x "
          f"{args.repeats} samples"
          f"{' (busy neighbour' + (', pinned' if args.busy_pin else '') + ')' if args.busy else ''}"
          f"; libraries: {', '.join(libs)}")
    has_np, has_bf = "numpy" in libs, "fk-bf16" in libs
    head = f"{'case':>22} {'thr':>3} " + " ".join(f"{lib:>8}" for lib in libs)
    head += ("  fk/np" if has_np else "") + (" bf16/fk" if has_bf else "")
    print(head + "   fkeras min..max")
    for M, N, K, variant in cases(args.quick):
        case = f"{M}x{N}x{K}:{variant}"
        for t in threads:
            row = " ".join(f"{med[(case, t, lib)]:8.1f}" for lib in libs)
            if has_np:
                row += f"  {med[(case, t, 'fkeras')] / med[(case, t, 'numpy')]:5.2f}"
            if has_bf:
                row += f"   {med[(case, t, 'fk-bf16')] / med[(case, t, 'fkeras')]:5.2f}"
            lo, hi = spread[(case, t, "fkeras")]
            print(f"{case:>22} {t:>3} {row}   {lo:.0f}..{hi:.0f}")
    if args.busy:
        print("\nunder load: fkeras 2 threads / 1 thread, and fkeras 2 threads / torch 2 threads")
        for M, N, K, variant in cases(args.quick):
            case = f"{M}x{N}x{K}:{variant}"
            f2 = med[(case, 2, "fkeras")]
            line = f"{case:>22}"
            if 1 in threads:
                line += f"  fk2/fk1 {f2 / med[(case, 1, 'fkeras')]:.2f}"
            if "torch" in libs:
                line += f"  fk2/torch2 {f2 / med[(case, 2, 'torch')]:.2f}"
            print(line)


if __name__ == "__main__":
    main()
