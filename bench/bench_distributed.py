"""Data-parallel training on MPI processes: 1 vs 2 ranks, and the allreduce behind it.

    python bench/bench_distributed.py [--ranks 2] [--repeats 5] [--rounds 1] [--only cnn,mlp]
    python bench/bench_distributed.py --model          (the ring-allreduce cost model only)

Every rank runs one thread (FKERAS_NUM_THREADS=1). For the CNN and MLP workloads of
bench_fit.py (same model builders, random data, Adam): training samples/s on 1 process and
on --ranks processes (`mpiexec -n R`), with the global batch kept (strong scaling: each rank
computes batch / R rows) and with the per-rank batch kept (weak scaling: global batch x R);
scaling efficiency = samples/s(R) / (R x samples/s(1)). Strong scaling runs three ways: the
default (on one machine: gradients summed in shared memory and the sharded optimizer update,
distribution/sharded_update.py), FKERAS_DIST_SHARDED=0 (MPI allreduce, bucketed during the
backward) and FKERAS_DIST_SHARDED=0 FKERAS_DIST_OVERLAP=0 (one allreduce after the backward);
the optimizer's `apply` is timed in each (its communication included). Then, on R ranks: the time of
fkeras's gradient allreduce (the communicator the optimizer uses, watchdog included) and of
MPI's own `Allreduce` on float32 buffers from 4 KB to 64 MB, as bus bandwidth
2 (R - 1) / R x bytes / time. Medians of --repeats, rank 0's clock, ranks started together
by a barrier before each timed run.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_fit import WORKLOADS, keras_like_model, make_data  # noqa: E402

STEPS = {"cnn": 16, "mlp": 40}
SIZES = [1 << k for k in range(10, 25, 2)]  # float32 elements: 4 KB .. 64 MB


def _timed_fit(fkeras, model, x, y, batch, comm):
    comm.barrier()
    t = time.perf_counter()
    model.fit(x, y, batch_size=batch, epochs=1, verbose=0, shuffle=False)
    comm.barrier()
    return time.perf_counter() - t


def _count_allreduce(comm, optimizer):
    """Wraps the communicator's blocking allreduce and the wait for bucketed ones with a
    clock: seconds the step spends blocked on gradient communication (spent[0]); and the
    optimizer's `apply` (spent[1]: the update, with the allreduce or the sharded exchange)."""
    spent = [0.0, 0.0]

    def clocked(fn):
        def call(*args):
            t = time.perf_counter()
            out = fn(*args)
            spent[0] += time.perf_counter() - t
            return out
        return call

    comm.allreduce_sum = clocked(comm.allreduce_sum)
    if hasattr(comm, "wait_all"):
        comm.wait_all = clocked(comm.wait_all)
    apply = optimizer.apply

    def applied(*args):
        t = time.perf_counter()
        out = apply(*args)
        spent[1] += time.perf_counter() - t
        return out

    optimizer.apply = applied
    return spent


def worker(names, repeats, weak, sweep):
    import fkeras

    fkeras.distribution.initialize()
    fkeras.distribution.set_distribution(fkeras.distribution.DataParallel())
    fkeras.config.set_num_threads(1)
    comm = fkeras.distribution.get_communicator()
    out = {}
    for name in names:
        batch = WORKLOADS[name][0] * (comm.size if weak else 1)
        x, y = make_data(name)
        n = batch * STEPS[name]
        reps = -(-n // len(x))
        x, y = np.concatenate([x] * reps)[:n], np.concatenate([y] * reps)[:n]
        fkeras.utils.set_random_seed(0)
        model = keras_like_model(fkeras, name)
        model.fit(x[:batch * 2], y[:batch * 2], batch_size=batch, epochs=1, verbose=0)
        spent = _count_allreduce(comm, model.optimizer)
        times = [_timed_fit(fkeras, model, x, y, batch, comm) for _ in range(repeats)]
        params = sum(int(np.prod(w.shape)) for w in model.trainable_weights)
        per_step = 1e3 / (repeats * STEPS[name])
        out[name] = {"samples_per_s": n / float(np.median(times)), "batch": batch,
                     "params": params, "ms_per_step": float(np.median(times)) / STEPS[name] * 1e3,
                     "allreduce_ms_per_step": spent[0] * per_step,
                     "optimizer_ms_per_step": spent[1] * per_step,
                     "sharded": bool(getattr(model.optimizer, "_fk_sharded", None))}
        for attr in ("allreduce_sum", "wait_all"):
            comm.__dict__.pop(attr, None)
        model.optimizer.__dict__.pop("apply", None)
    if comm.size > 1 and sweep:
        out["allreduce"] = allreduce_sweep(comm, repeats)
    if comm.rank == 0:
        print("RESULT " + json.dumps(out))


def allreduce_sweep(comm, repeats):
    """Seconds per allreduce of n float32: fkeras's communicator and raw mpi4py."""
    from mpi4py import MPI

    rows = []
    for n in SIZES:
        buf = np.ones(n, np.float32)
        inner = max(1, min(200, (1 << 22) // n))
        res = {}
        for label, fn in (("fkeras", lambda: comm.allreduce_sum(buf)),
                          ("mpi", lambda: comm.comm.Allreduce(MPI.IN_PLACE, buf, MPI.SUM))):
            fn()
            samples = []
            for _ in range(repeats):
                comm.barrier()
                t = time.perf_counter()
                for _ in range(inner):
                    fn()
                samples.append((time.perf_counter() - t) / inner)
            res[label] = float(np.median(samples))
        rows.append({"elements": n, **res})
    return rows


def launch(ranks, names, repeats, weak=False, overlap=True, sharded=True, sweep=False):
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--only", ",".join(names),
           "--repeats", str(repeats)] + (["--weak"] if weak else []) + (
           ["--sweep"] if sweep else [])
    env = dict(os.environ, FKERAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               FKERAS_DIST_OVERLAP="1" if overlap else "0",
               FKERAS_DIST_SHARDED="1" if sharded else "0")
    if ranks > 1:
        here = Path(sys.executable).parent
        mpiexec = shutil.which("mpiexec", path=f"{here}{os.pathsep}{env.get('PATH', '')}")
        cmd = [mpiexec, "-n", str(ranks)] + cmd
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")][0]
    return json.loads(line[7:])


def _median_runs(runs):
    """Per workload, the median over launches of every numeric figure."""
    out = {}
    for name in runs[0]:
        out[name] = {k: (float(np.median([r[name][k] for r in runs]))
                         if isinstance(v, float) else v) for k, v in runs[0][name].items()}
    return out


def ring_model(params, ranks, gbps=25.0, latency=10e-6):
    """Seconds of one ring allreduce of `params` float32 on `ranks` ranks: 2 (p - 1) steps,
    each sending 1/p of the buffer, so 2 (p - 1) / p x bytes over the link plus 2 (p - 1)
    latencies."""
    nbytes = 4.0 * params
    return 2 * (ranks - 1) / ranks * nbytes / (gbps * 1e9 / 8) + 2 * (ranks - 1) * latency


def print_model(cnn_params):
    print("\nRing allreduce on 25 Gb/s (3.125 GB/s per link), 10 us per message:")
    print("| model | gradient | ranks | allreduce ms | bandwidth part | latency part |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for label, params in (("CNN", cnn_params), ("100M-parameter", 100_000_000)):
        for p in (8, 64, 512):
            total = ring_model(params, p)
            lat = 2 * (p - 1) * 10e-6
            print(f"| {label} | {4 * params / 1e6:.1f} MB | {p} | {total * 1e3:.1f} | "
                  f"{(total - lat) * 1e3:.1f} | {lat * 1e3:.2f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", default="cnn,mlp")
    parser.add_argument("--worker", action="store_true")
    parser.add_argument("--weak", action="store_true")
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument("--rounds", type=int, default=1,
                        help="launch every configuration this many times, in turns; report "
                             "the medians")
    parser.add_argument("--model", action="store_true")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n]
    if args.worker:
        return worker(names, args.repeats, args.weak, args.sweep)
    if args.model:
        return print_model(1_199_882)
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    configs = {"one": dict(ranks=1), "many": dict(ranks=args.ranks),
               "bucketed": dict(ranks=args.ranks, sharded=False),
               "blocking": dict(ranks=args.ranks, sharded=False, overlap=False),
               "weak": dict(ranks=args.ranks, weak=True)}
    runs = {key: [] for key in configs}
    for _ in range(args.rounds):  # in turns: a drift of the machine touches every config
        for key, cfg in configs.items():
            runs[key].append(launch(names=names, repeats=args.repeats, **cfg))
    one, many, bucketed, blocking, weak = (_median_runs(runs[k]) for k in configs)
    many["allreduce"] = launch(args.ranks, [], args.repeats, sweep=True)["allreduce"]
    r = args.ranks
    print(f"| workload | 1 rank samples/s | {r} ranks, same global batch (default) | eff. | "
          f"MPI bucketed | MPI one allreduce | blocked ms/step: one allreduce / bucketed | "
          f"hidden | optimizer ms/step: 1 rank / default / MPI one allreduce | "
          f"{r} ranks, batch x {r} | eff. |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in names:
        s1, s2, sb, so, sw = (d[name]["samples_per_s"]
                              for d in (one, many, bucketed, blocking, weak))
        bk, plain = (d[name]["allreduce_ms_per_step"] for d in (bucketed, blocking))
        o1, o2, oo = (d[name]["optimizer_ms_per_step"] for d in (one, many, blocking))
        path = "sharded" if many[name]["sharded"] else "MPI"
        print(f"| {name} (b{one[name]['batch']}, {one[name]['params']} params) | {s1:.0f} | "
              f"{s2:.0f} ({s2 / s1:.2f}x, {path}) | {s2 / (r * s1):.0%} | "
              f"{sb:.0f} ({sb / s1:.2f}x) | {so:.0f} ({so / s1:.2f}x) | {plain:.2f} / "
              f"{bk:.2f} of {bucketed[name]['ms_per_step']:.1f} | "
              f"{1 - bk / plain:.0%} | {o1:.2f} / {o2:.2f} / {oo:.2f} | "
              f"{sw:.0f} ({sw / s1:.2f}x) | {sw / (r * s1):.0%} |")
    print(f"\nAllreduce on {r} ranks (float32, median; bus bandwidth 2(R-1)/R x bytes / time):")
    print("| elements | MB | fkeras ms | MPI ms | fkeras GB/s | MPI GB/s |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in many["allreduce"]:
        nbytes = 4 * row["elements"]
        bus = 2 * (r - 1) / r * nbytes / 1e9
        print(f"| {row['elements']} | {nbytes / 1e6:.3f} | {row['fkeras'] * 1e3:.3f} | "
              f"{row['mpi'] * 1e3:.3f} | {bus / row['fkeras']:.2f} | {bus / row['mpi']:.2f} |")
    if "cnn" in names:
        print_model(one["cnn"]["params"])
        print(f"(CNN step on 1 rank x 1 thread: {one['cnn']['ms_per_step']:.1f} ms)")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
