"""The one pass over dy of the conv2d / dense backward (bias_activation_backward) against the two
passes it replaced in the conv2d op (activation_backward, then bias_add_backward over dz).

    python bench/bench_dy_pass.py [--threads 1] [--rounds 10] [--fit cnn,mlp]

Kernel level: the CNN's two ReLU convolution outputs, best of 9 blocks of 20 calls, the two
forms in turn. Fit level (--fit): bench_fit's models in float32 and mixed_bfloat16, one-epoch
fits alternated in one process with the fused kernel in the device tables and without it (the
conv2d op then takes the two-pass path); at 1 thread the clock is the process CPU time, which
a shared machine disturbs less than the wall clock.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

FUSED = "bias_activation_backward"


def kernel_level(C, rounds):
    rng = np.random.default_rng(0)

    def best(f):
        out = []
        for _ in range(9):
            t = time.perf_counter()
            for _ in range(20):
                f()
            out.append((time.perf_counter() - t) / 20)
        return min(out) * 1e3

    for M, N in ((64 * 26 * 26, 32), (64 * 24 * 24, 64)):
        dy = rng.standard_normal((M, N), dtype=np.float32)
        y = np.maximum(rng.standard_normal((M, N), dtype=np.float32), 0)
        dz, db = np.empty_like(dy), np.empty(N, np.float32)

        def two():
            C.activation_backward(dz, dy, y, y, M * N, 1, 0.0)
            C.bias_add_backward(db, dz, M, N)

        def one():
            getattr(C, FUSED)(dz, db, dy, y, M, N, 1, 0.0)

        t2, t1 = [], []
        for _ in range(rounds):
            t2.append(best(two))
            t1.append(best(one))
        print(f"dy pass ({M}, {N}) relu + bias: two passes {np.median(t2):.3f} ms, "
              f"one pass {np.median(t1):.3f} ms (medians of {rounds})")


def fit_level(fkeras, work, rounds, threads):
    import bench_fit as bf
    from fkeras.backend import devices

    batch, _, _, steps, _ = bf.WORKLOADS[work]
    x, y = bf.make_data(work)
    x, y = x[:batch * steps], y[:batch * steps]
    models = {}
    for pol in ("float32", "mixed_bfloat16"):
        fkeras.config.set_dtype_policy(pol)
        models[pol] = bf.keras_like_model(fkeras, work)
        models[pol].fit(x, y, batch_size=batch, epochs=1, verbose=0)
    fkeras.config.set_dtype_policy("float32")
    saved = {}

    def fused(on):
        for key, dev in devices._devices.items():
            if on and key in saved:
                dev.kernels[FUSED] = saved.pop(key)
            elif not on and FUSED in dev.kernels:
                saved[key] = dev.kernels.pop(FUSED)

    clock = time.process_time if threads == 1 else time.perf_counter
    res = {}
    try:
        for _ in range(rounds):
            for pol, model in models.items():
                for on in (True, False):
                    fused(on)
                    t = clock()
                    model.fit(x, y, batch_size=batch, epochs=1, verbose=0, shuffle=False)
                    res.setdefault((pol, on), []).append((clock() - t) / steps * 1e3)
    finally:
        fused(True)
    for (pol, on), t in res.items():
        print(f"{work:4s} {pol:15s} {'one pass ' if on else 'two passes'} min {min(t):7.3f} "
              f"median {np.median(t):7.3f} ms/step")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--fit", default="", help="comma-separated bench_fit workloads (cnn, mlp)")
    args = p.parse_args()
    import fkeras
    from fkeras import _native

    _native._C.set_num_threads(args.threads)
    kernel_level(_native._C, max(1, args.rounds // 3))
    for work in filter(None, args.fit.split(",")):
        fit_level(fkeras, work, args.rounds, args.threads)


if __name__ == "__main__":
    main()
