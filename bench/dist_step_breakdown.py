"""Where a data-parallel training step spends its time: per-phase clocks on every rank.

    python bench/dist_step_breakdown.py [--workload cnn] [--batch 64]           (one process)
    mpiexec -n 2 python bench/dist_step_breakdown.py [--workload cnn] [--batch 64]

Run it once alone at the per-rank batch (e.g. `--batch 32`) and once under `mpiexec -n 2`
at the global batch (64): the difference per phase is what the distributed step adds.
FKERAS_DIST_SHARDED=0 / FKERAS_DIST_OVERLAP=0 select the MPI paths. One thread per rank.
Phases (ms per step, wall clock, nested ones indented): forward, tape.gradient (with the
bucketed allreduce's per-gradient work when used), optimizer.apply (gather into the flat
buffer, the sharded update or the allreduce + update), barrier and MPI waits, the fit-level
collectives (start_fit, reduce_metrics). Every wrapper costs ~1 us per call.
"""

import argparse
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("FKERAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

from bench_fit import keras_like_model, make_data  # noqa: E402

STEPS, REPEATS = 16, 5


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="cnn")
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    import fkeras
    from fkeras.distribution import bucketing, data_parallel, sharded_update
    from fkeras.engine.tape import GradientTape
    from fkeras.trainers.step_state import get_state

    fkeras.distribution.initialize()
    fkeras.distribution.set_distribution(fkeras.distribution.DataParallel())
    fkeras.config.set_num_threads(1)
    comm = fkeras.distribution.get_communicator()
    b = args.batch
    x, y = make_data(args.workload)
    n = b * STEPS
    reps = -(-n // len(x))
    x, y = np.concatenate([x] * reps)[:n], np.concatenate([y] * reps)[:n]
    fkeras.utils.set_random_seed(0)
    model = keras_like_model(fkeras, args.workload)
    model.fit(x[:b * 2], y[:b * 2], batch_size=b, epochs=1, verbose=0)
    spent, calls = defaultdict(float), defaultdict(int)

    def clock(owner, attr, key):
        fn = getattr(owner, attr)

        def call(*a, **k):
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent[key] += time.perf_counter() - t
                calls[key] += 1

        setattr(owner, attr, call)

    opt = model.optimizer
    phases = (
            (type(model), "_fk_train_step", "train step"),
            (type(get_state(model)), "forward", "  forward"),
            (GradientTape, "gradient", "  tape.gradient"),
            (bucketing.GradientReducer, "ready", "    bucketed: copy + Iallreduce/Testall"),
            (bucketing.GradientReducer, "finish", "  bucketed: wait for the last buckets"),
            (opt, "apply", "  optimizer.apply"),
            (opt, "_gather", "    gather into the flat buffer"),
            (opt, "_apply_flat", "    flat update (+ allreduce or sharded)"),
            (sharded_update.ShardedUpdate, "apply", "      sharded: sum, 1/N update, exchange"),
            (comm, "barrier", "        barrier"),
            (comm, "allreduce_sum", "      MPI allreduce"),
            (data_parallel, "start_fit", "start_fit (per fit)"),
            (data_parallel, "reduce_metrics", "reduce_metrics (per epoch)"))
    for owner, attr, key in phases:
        clock(owner, attr, key)
    times = []
    for _ in range(REPEATS):
        comm.barrier()
        t = time.perf_counter()
        model.fit(x, y, batch_size=b, epochs=1, verbose=0, shuffle=False)
        comm.barrier()
        times.append(time.perf_counter() - t)
    for r in range(comm.size):
        if r == comm.rank:
            step = float(np.median(times)) / STEPS * 1e3
            print(f"rank {comm.rank} of {comm.size}, {args.workload} b{b} "
                  f"(sharded: {bool(getattr(opt, '_fk_sharded', None))}): "
                  f"{step:.2f} ms/step, {n / float(np.median(times)):.0f} samples/s, "
                  f"load {os.getloadavg()[0]:.2f}")
            for _, _, key in phases:
                if calls[key]:
                    print(f"  {key:<48} {spent[key] / (REPEATS * STEPS) * 1e3:7.3f} ms/step")
            sys.stdout.flush()
        comm.barrier()


if __name__ == "__main__":
    main()
