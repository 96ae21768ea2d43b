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

--busy starts one busy-looping process (pinned to CPU 0 with --busy-pin) for the whole run and
reports how fkeras at 2 threads holds up against fkeras at 1 thread and torch at 2 threads.

Usage:
    python bench/bench_gemm.py                       # full table, 1 and 2 threads
    python bench/bench_gemm.py --quick --rounds 1    # a few cases
    python bench/bench_gemm.py --busy --busy-pin     # under a busy neighbour
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


def cases(quick):
    out = [(n, n, n, "nn") for n in ([64, 256, 1024] if quick else SQUARE)]
    for M, N, K in TRAINING[:2] if quick else TRAINING:
        out += [(M, N, K, v) for v in ("nn", "nt", "tn")]
    return out


# ---- worker side ------------------------------------------------------------------------------


def make_operands(np, M, N, K, variant, rng):
    A = rng.standard_normal((K, M) if variant == "tn" else (M, K)).astype(np.float32)
    B = rng.standard_normal((N, K) if variant == "nt" else (K, N)).astype(np.float32)
    return A, B


def runner(lib, np, M, N, K, variant, A, B, C):
    ta, tb = variant == "tn", variant == "nt"
    if lib == "fkeras":
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


def validate(np, fn, A, B, C, variant):
    fn()
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

    if args.lib == "fkeras":
        from fkeras import _C

        _C.set_num_threads(args.threads)
    elif args.lib == "torch":
        import torch

        torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    results = {}
    for M, N, K, variant in cases(args.quick):
        A, B = make_operands(np, M, N, K, variant, rng)
        C = np.empty((M, N), np.float32)
        fn = runner(args.lib, np, M, N, K, variant, A, B, C)
        validate(np, fn, A, B, C, variant)
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


def libraries():
    libs = ["fkeras", "numpy"]
    try:
        import torch  # noqa: F401

        libs.append("torch")
    except ImportError:
        pass
    return libs


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
    libs = libraries()
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
    med = {k: statistics.median(v) for k, v in samples.items()}
    spread = {k: (min(v), max(v)) for k, v in samples.items()}

    print(f"GFLOP/s, median of {args.rounds} rounds x {args.repeats} samples"
          f"{' (busy neighbour' + (', pinned' if args.busy_pin else '') + ')' if args.busy else ''}"
          f"; libraries: {', '.join(libs)}")
    head = f"{'case':>22} {'thr':>3} " + " ".join(f"{lib:>8}" for lib in libs) + "  fk/np"
    print(head + "   fkeras min..max")
    for M, N, K, variant in cases(args.quick):
        case = f"{M}x{N}x{K}:{variant}"
        for t in threads:
            row = " ".join(f"{med[(case, t, lib)]:8.1f}" for lib in libs)
            ratio = med[(case, t, "fkeras")] / med[(case, t, "numpy")]
            lo, hi = spread[(case, t, "fkeras")]
            print(f"{case:>22} {t:>3} {row}  {ratio:5.2f}   {lo:.0f}..{hi:.0f}")
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
