"""Roofline report of fkeras's training step (issue 17): where each fit workload's time goes,
and how far each kernel is from the machine's limits.

    python bench/roofline.py [--threads 2] [--steps 20] [--only mlp,cnn,cnnbn,lstm,tiny]
                             [--dtype-policy mixed_bfloat16] [--predict]

1. Measures this machine: the practical SGEMM peak (fkeras's own `gemm` on 2048^3 float32 and
   NumPy/OpenBLAS's, best of several runs, the larger taken as the peak), and the memory
   bandwidth (a 256 MB float32 copy, counted as read + write, best of several runs).
2. For each workload of bench/bench_fit.py: the train step's wall time without
   instrumentation (median over --steps steps, after a warm-up), then the same fit with every
   device kernel wrapped in a timer. Each call's useful work comes from its arguments: FLOPs
   for the GEMM-shaped kernels (dense, gemm, conv, recurrent sequences, attention: 2 per
   multiply-add), bytes moved (the arrays it reads and writes) for the others.
3. Prints per kernel: calls per step, ms per step, achieved GFLOP/s and % of the SGEMM peak or
   GB/s and % of the bandwidth, and its lower bound max(FLOPs / peak, bytes / bandwidth); then
   the step: kernels' sum, the rest (Python, NumPy structural ops, the tape), the sum of the
   kernels' lower bounds, and the useful FLOP rate of the whole step against the peak.
--predict profiles one `predict` batch (same batch size) instead of a training step.
--dtype-policy mixed_bfloat16 builds the models under that policy (bf16 products): the kernels
of the bf16-products device are timed too, listed with a "[bf16]" tag, and their FLOPs are
measured against the bf16 GEMM peak (the same 2048^3 GEMM with bf16 products, where the CPU
has them); the step's useful rate is given against both peaks.
Timings are wall clock: run on a quiet machine (the figures in bench/README.md say the load).
"""

import argparse
import ast
import os
import statistics
import sys
import time
from collections import defaultdict

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


# ---- the machine ----

def measure_peaks(repeats=5):
    from fkeras import _native

    n = 2048
    a = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((n, n)).astype(np.float32)
    c = np.empty((n, n), np.float32)
    flops = 2.0 * n ** 3

    def best(fn):
        fn()
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        return min(times)

    ours = flops / best(lambda: _native._C.gemm(c, a, b, n, n, n, False, False, 1.0, 0.0))
    blas = flops / best(lambda: np.matmul(a, b, out=c))
    bf16 = None
    if _native._C.gemm_bf16_native():
        previous = _native._C.set_gemm_bf16(True)
        try:
            bf16 = flops / best(lambda: _native._C.gemm(c, a, b, n, n, n, False, False, 1.0, 0.0))
        finally:
            _native._C.set_gemm_bf16(previous)
    big = np.ones(64 * 2 ** 20, np.float32)  # 256 MB
    dst = np.empty_like(big)
    bandwidth = 2 * big.nbytes / best(lambda: np.copyto(dst, big))
    return {"fkeras_gemm": ours, "openblas_gemm": blas, "peak": max(ours, blas),
            "bf16_peak": bf16, "bandwidth": bandwidth}


# ---- work of one kernel call ----

def _signatures():
    """Parameter names of every fkeras._C kernel, from the package's _C.pyi stub."""
    import fkeras

    path = os.path.join(os.path.dirname(fkeras.__file__), "_C.pyi")
    tree = ast.parse(open(path).read())
    return {node.name: [a.arg for a in node.args.args] for node in tree.body
            if isinstance(node, ast.FunctionDef)}


def _gemm_flops(name, a):
    g = a.get
    if name == "dense_forward":
        return 2.0 * g("M") * g("N") * g("K")
    if name == "dense_backward":
        return 2.0 * g("M") * g("N") * g("K") * ((a.get("dx") is not None)
                                                + (a.get("dkernel") is not None))
    if name == "gemm":
        return 2.0 * g("M") * g("N") * g("K")
    if name.startswith("conv2d_") and name != "conv2d_maxpool2d_backward":  # that: no products
        return 2.0 * g("N") * g("P") * g("Q") * g("K") * g("R") * g("S") * g("C") / g("groups")
    for cell, gates in (("lstm", 4), ("gru", 3), ("simple_rnn", 1)):
        if name.startswith(cell + "_sequence"):
            forward = 2.0 * g("N") * g("T") * (g("F") + g("U")) * gates * g("U")
            return forward if name.endswith("forward") else 2 * forward
    if name.startswith("attention_"):
        q, k = a.get("q"), a.get("k")
        if q is not None and k is not None and q.ndim == 4:
            b, tq, h, d = q.shape
            forward = 4.0 * b * h * tq * k.shape[1] * d
            return forward if name.endswith("forward") else 2.5 * forward
    return None


def _bytes(args):
    return float(sum(x.nbytes for x in args if isinstance(x, np.ndarray)))


class Recorder:
    def __init__(self, signatures):
        self.signatures = signatures
        self.time = defaultdict(float)
        self.calls = defaultdict(int)
        self.flops = defaultdict(float)
        self.bytes = defaultdict(float)

    def wrap(self, key, fn, tag=""):
        names = self.signatures.get(key, [])
        kernel, key = key, key + tag

        def call(*args):
            t = time.perf_counter()
            out = fn(*args)
            self.time[key] += time.perf_counter() - t
            self.calls[key] += 1
            named = dict(zip(names, args))
            flops = _gemm_flops(kernel, named) if names else None
            if flops:
                self.flops[key] += flops
            self.bytes[key] += _bytes(args)
            return out

        return call


# ---- one workload ----

def runner(model, x, y, batch, steps, predict):
    """One run of `steps` batches: fit steps, or predict batches."""
    if predict:
        return lambda: model.predict(x[:batch * steps], batch_size=batch, verbose=0)
    return lambda: model.fit(x[:batch * steps], y[:batch * steps], batch_size=batch, epochs=1,
                             verbose=0, shuffle=False)


def step_time(model, x, y, batch, steps, predict=False):
    runner(model, x, y, batch, 2, predict)()
    run = runner(model, x, y, batch, steps, predict)
    times = []
    for _ in range(3):
        t = time.perf_counter()
        run()
        times.append((time.perf_counter() - t) / steps)
    return statistics.median(times)


def report(name, steps, machine, predict=False):
    import bench_fit
    import fkeras
    from fkeras.backend import devices

    batch = bench_fit.WORKLOADS[name][0]
    x, y = bench_fit.make_data(name)
    steps = max(1, min(steps, len(x) // batch))  # the data holds this many batches
    model = bench_fit.keras_like_model(fkeras, name)
    step = step_time(model, x, y, batch, steps, predict)
    recorder = Recorder(_signatures())
    # The cpu device and, under mixed_bfloat16, its bf16-products variant (created by the
    # first bf16 layer call above).
    cpu, bf16 = devices.get_device("cpu"), devices._devices.get(devices._BF16)
    tagged = [(cpu.kernels, "")] + ([(bf16.kernels, " [bf16]")]
                                    if bf16 is not None and bf16 is not cpu else [])
    tables = [t for t, _ in tagged]
    originals = [dict(t) for t in tables]
    for (table, tag), original in zip(tagged, originals):
        for key, fn in original.items():
            table[key] = recorder.wrap(key, fn, tag)
    try:
        runner(model, x, y, batch, steps, predict)()
    finally:
        for table, original in zip(tables, originals):
            table.update(original)
    bw = machine["bandwidth"]
    rows, kernel_sum, bound_sum, flop_sum = [], 0.0, 0.0, 0.0
    for key in sorted(recorder.time, key=recorder.time.get, reverse=True):
        peak = (machine["bf16_peak"] if key.endswith("[bf16]") and machine["bf16_peak"]
                else machine["peak"])
        t = recorder.time[key] / steps
        flops = recorder.flops.get(key, 0.0) / steps
        nbytes = recorder.bytes[key] / steps
        bound = max(flops / peak, nbytes / bw)
        kernel_sum += t
        bound_sum += bound
        flop_sum += flops
        if flops:
            rate = f"{flops / t / 1e9:7.1f} GFLOP/s {100 * flops / t / peak:5.1f}% peak"
        else:
            rate = f"{nbytes / t / 1e9:7.1f} GB/s    {100 * nbytes / t / bw:5.1f}% bw  "
        rows.append(f"  {key:43s} {recorder.calls[key] // steps:3d} {t * 1e3:8.3f} ms  {rate}"
                    f"  bound {bound * 1e3:7.3f} ms")
    what = "predict batch" if predict else "step"
    print(f"\n{name} (batch {batch}): {what} {step * 1e3:.3f} ms, kernels {kernel_sum * 1e3:.3f} ms "
          f"({100 * kernel_sum / step:.0f}%), rest {max(step - kernel_sum, 0) * 1e3:.3f} ms; "
          f"sum of kernel lower bounds {bound_sum * 1e3:.3f} ms "
          f"({100 * bound_sum / step:.0f}% of the step); useful {flop_sum / step / 1e9:.1f} "
          f"GFLOP/s = {100 * flop_sum / step / machine['peak']:.0f}% of the SGEMM peak"
          + (f", {100 * flop_sum / step / machine['bf16_peak']:.0f}% of the bf16 GEMM peak"
             if any(k.endswith("[bf16]") for k in recorder.time) and machine["bf16_peak"]
             else ""))
    print("\n".join(rows))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--only", default="mlp,cnn,cnnbn,lstm,tiny")
    p.add_argument("--predict", action="store_true",
                   help="profile a predict batch instead of a training step")
    p.add_argument("--dtype-policy", default=None,
                   help="e.g. mixed_bfloat16: the models' global dtype policy")
    args = p.parse_args()
    import fkeras

    if args.dtype_policy:
        fkeras.config.set_dtype_policy(args.dtype_policy)
    fkeras.config.set_num_threads(args.threads)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", str(args.threads))
    machine = measure_peaks()
    print(f"machine ({args.threads} threads): SGEMM 2048^3 fkeras "
          f"{machine['fkeras_gemm'] / 1e9:.1f} GFLOP/s, OpenBLAS "
          f"{machine['openblas_gemm'] / 1e9:.1f} GFLOP/s -> peak "
          f"{machine['peak'] / 1e9:.1f}"
          + (f"; bf16 GEMM peak {machine['bf16_peak'] / 1e9:.1f}" if machine["bf16_peak"] else "")
          + f"; copy bandwidth {machine['bandwidth'] / 1e9:.1f} GB/s")
    for name in args.only.split(","):
        report(name, args.steps, machine, args.predict)


if __name__ == "__main__":
    main()
