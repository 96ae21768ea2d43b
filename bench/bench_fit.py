"""Training and inference throughput of fit/predict: fkeras vs PyTorch eager vs Keras 3.

    python bench/bench_fit.py [--threads 2] [--repeats 5] [--rounds 3] [--only mlp,tiny]
                              [--frameworks fkeras,torch] [--leak] [--first-step]
    python bench/bench_fit.py --profile cnn [--threads 1]   (per-kernel ms of a train step;
        process CPU time, which a loaded machine disturbs less than wall time, at 1 thread)
    python bench/bench_fit.py --gpu [--batch-scale 8]   (fkeras on its cuda device against
        torch CUDA eager, batches 8x larger to fill the GPU; tools/gpu_check.sh runs it)

Workloads (random data, Adam, no metrics):
  mlp   MLP 784-512-512-10, batch 128, sparse categorical crossentropy
  cnn   28x28x1 conv32-conv64-maxpool-dense128-dense10, batch 64
  cnnbn the same CNN with BatchNormalization after each convolution
  lstm  LSTM(128) over 50 steps of 32 features, Dense(1), mse, batch 64
  tiny  the article's 10-20-20-1 sigmoid model, binary crossentropy, batch 64
  transformer  a 2-block post-norm encoder over 128 steps of 128 features (MultiHeadAttention
        4 heads x 32, residual + LayerNormalization, feed-forward 256 relu -> 128, residual +
        LayerNormalization), mean over time, Dense(10) softmax, batch 32; PyTorch: the same
        shapes with nn.TransformerEncoder (dropout 0, batch_first)
Each framework runs in its own subprocess (Keras once per installed backend: jax, torch,
tensorflow), pinned to --threads threads; a result is the median of --repeats timed runs after
a warm-up. Missing frameworks are skipped. `--frameworks fkeras,fkeras-bf16` adds fkeras under
Keras 3's mixed_bfloat16 dtype policy (bf16 products). --leak runs 21 epochs of the CNN in fkeras and
reports the resident-memory growth after the first epoch. --first-step times, in fresh
processes (median of --repeats), import + build + compile + one fit step of the tiny model.
--rss runs each workload's fit in a fresh process per framework and reports the peak resident
set (the kernel's VmHWM: imports, data and model included, as a user's process sees it) and the
part above the resident set right after the framework's import (data, model, fit, predict).
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

WORKLOADS = {
    # name: (batch, input shape, classes (0: regression), train steps per run, predict batches)
    "mlp": (128, (784,), 10, 40, 40),
    "cnn": (64, (28, 28, 1), 10, 8, 16),
    "cnnbn": (64, (28, 28, 1), 10, 8, 16),
    "lstm": (64, (50, 32), 0, 6, 12),
    "tiny": (64, (10,), -1, 400, 400),  # -1: binary
    "transformer": (32, (128, 128), 10, 6, 12),
}
TRANSFORMER = dict(blocks=2, heads=4, embed=128, ff=256)


def make_data(name):
    batch, shape, classes, steps, pred = WORKLOADS[name]
    rng = np.random.default_rng(0)
    n = batch * max(steps, pred)
    x = rng.standard_normal((n,) + shape).astype("float32")
    if classes > 0:
        y = rng.integers(0, classes, n)
    elif classes == 0:
        y = rng.standard_normal((n, 1)).astype("float32")
    else:
        y = (rng.uniform(size=(n, 1)) > 0.5).astype("float32")
    return x, y


def keras_like_model(lib, name):
    L = lib.layers
    batch, shape, classes, _, _ = WORKLOADS[name]
    inp = lib.Input(shape)
    if name == "mlp":
        h = L.Dense(512, activation="relu")(L.Dense(512, activation="relu")(inp))
        out = L.Dense(10, activation="softmax")(h)
    elif name in ("cnn", "cnnbn"):
        h = inp
        for filters in (32, 64):
            h = L.Conv2D(filters, 3, activation=None if name == "cnnbn" else "relu")(h)
            if name == "cnnbn":
                h = L.Activation("relu")(L.BatchNormalization()(h))
        h = L.Flatten()(L.MaxPooling2D()(h))
        out = L.Dense(10, activation="softmax")(L.Dense(128, activation="relu")(h))
    elif name == "lstm":
        out = L.Dense(1)(L.LSTM(128)(inp))
    elif name == "transformer":
        cfg, h = TRANSFORMER, inp
        for _ in range(cfg["blocks"]):
            a = L.MultiHeadAttention(cfg["heads"], cfg["embed"] // cfg["heads"])(h, h)
            h = L.LayerNormalization(epsilon=1e-5)(L.Add()([h, a]))
            f = L.Dense(cfg["embed"])(L.Dense(cfg["ff"], activation="relu")(h))
            h = L.LayerNormalization(epsilon=1e-5)(L.Add()([h, f]))
        out = L.Dense(10, activation="softmax")(L.GlobalAveragePooling1D()(h))
    else:
        h = L.Dense(20, activation="relu")(L.Dense(20, activation="relu")(inp))
        out = L.Dense(1, activation="sigmoid")(h)
    model = lib.Model(inp, out)
    loss = {"lstm": "mse", "tiny": "binary_crossentropy"}.get(name,
                                                              "sparse_categorical_crossentropy")
    model.compile(optimizer=lib.optimizers.Adam(1e-3), loss=loss)
    return model


def time_keras_like(lib, name, repeats):
    batch, _, _, steps, pred = WORKLOADS[name]
    if os.environ.get("BENCH_DEVICE") == "cuda":  # --gpu: the same fit on fkeras's cuda device
        with lib.device("cuda"):
            return _time_keras_like(lib, name, repeats, batch, steps, pred)
    return _time_keras_like(lib, name, repeats, batch, steps, pred)


def _time_keras_like(lib, name, repeats, batch, steps, pred):
    x, y = make_data(name)
    model = keras_like_model(lib, name)
    xt, yt = x[:batch * steps], y[:batch * steps]
    model.fit(xt[:batch * 2], yt[:batch * 2], batch_size=batch, epochs=1, verbose=0)
    model.predict(x[:batch * 2], batch_size=batch, verbose=0)
    train, infer = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        model.fit(xt, yt, batch_size=batch, epochs=1, verbose=0, shuffle=False)
        train.append(len(xt) / (time.perf_counter() - t))
        xp = x[:batch * pred]
        t = time.perf_counter()
        model.predict(xp, batch_size=batch, verbose=0)
        infer.append(len(xp) / (time.perf_counter() - t))
    return float(np.median(train)), float(np.median(infer))


def torch_model(torch, name):
    nn = torch.nn
    if name == "mlp":
        return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                             nn.Linear(512, 10))
    if name in ("cnn", "cnnbn"):
        bn = name == "cnnbn"
        return nn.Sequential(nn.Conv2d(1, 32, 3), *([nn.BatchNorm2d(32)] if bn else []),
                             nn.ReLU(), nn.Conv2d(32, 64, 3),
                             *([nn.BatchNorm2d(64)] if bn else []), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64 * 12 * 12, 128),
                             nn.ReLU(), nn.Linear(128, 10))
    if name == "lstm":
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm, self.out = nn.LSTM(32, 128, batch_first=True), nn.Linear(128, 1)

            def forward(self, x):
                return self.out(self.lstm(x)[0][:, -1])

        return Net()
    if name == "transformer":
        cfg = TRANSFORMER

        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                block = nn.TransformerEncoderLayer(cfg["embed"], cfg["heads"], cfg["ff"],
                                                   dropout=0.0, batch_first=True)
                self.encoder = nn.TransformerEncoder(block, cfg["blocks"],
                                                     enable_nested_tensor=False)
                self.out = nn.Linear(cfg["embed"], 10)

            def forward(self, x):
                return self.out(self.encoder(x).mean(1))

        return Encoder()
    return nn.Sequential(nn.Linear(10, 20), nn.ReLU(), nn.Linear(20, 20), nn.ReLU(),
                         nn.Linear(20, 1))


def time_torch(name, repeats, threads):
    import torch

    torch.set_num_threads(threads)
    batch, _, classes, steps, pred = WORKLOADS[name]
    x, y = make_data(name)
    if name in ("cnn", "cnnbn"):
        x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    xs, ys = torch.from_numpy(x), torch.from_numpy(np.asarray(y))
    model = torch_model(torch, name)
    gpu = os.environ.get("BENCH_DEVICE") == "cuda"
    if gpu:  # --gpu: data on the device once (as torch users hold it), timings synchronized
        model, xs, ys = model.cuda(), xs.cuda(), ys.cuda()
    sync = torch.cuda.synchronize if gpu else (lambda: None)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = (torch.nn.CrossEntropyLoss() if classes > 0 else torch.nn.MSELoss()
               if classes == 0 else torch.nn.BCEWithLogitsLoss())

    def epoch(n):
        model.train()
        for i in range(n):
            xb, yb = xs[i * batch:(i + 1) * batch], ys[i * batch:(i + 1) * batch]
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()

    def infer(n):
        model.eval()
        with torch.no_grad():
            for i in range(n):
                model(xs[i * batch:(i + 1) * batch])

    epoch(2)
    infer(2)
    train, inf = [], []
    for _ in range(repeats):
        sync()
        t = time.perf_counter()
        epoch(steps)
        sync()
        train.append(batch * steps / (time.perf_counter() - t))
        t = time.perf_counter()
        infer(pred)
        sync()
        inf.append(batch * pred / (time.perf_counter() - t))
    return float(np.median(train)), float(np.median(inf))


def worker(framework, names, repeats, threads):
    results = {}
    if framework in ("fkeras", "fkeras-bf16"):
        import fkeras

        fkeras.config.set_num_threads(threads)
        if framework == "fkeras-bf16":  # Keras 3's mixed_bfloat16 policy (bf16 products)
            fkeras.config.set_dtype_policy("mixed_bfloat16")
        for name in names:
            results[name] = time_keras_like(fkeras, name, repeats)
    elif framework == "torch":
        for name in names:
            results[name] = time_torch(name, repeats, threads)
    else:
        import keras

        for name in names:
            results[name] = time_keras_like(keras, name, repeats)
    print("RESULT " + json.dumps(results))


def _vm_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


def rss_worker(framework, name, repeats, threads):
    """Peak resident set of one process that fits `name` (`repeats` timed epochs after the
    warm-up, as in the speed runs, then predict): VmHWM at the end, and the part above the
    resident set right after the framework's import (data, model, fit, predict)."""
    if framework == "torch":
        import torch

        torch.set_num_threads(threads)
        before = _vm_kb("VmRSS")
        time_torch(name, repeats, threads)
    else:
        import importlib

        lib = importlib.import_module("fkeras" if framework.startswith("fkeras") else "keras")
        if framework.startswith("fkeras"):
            lib.config.set_num_threads(threads)
            if framework == "fkeras-bf16":
                lib.config.set_dtype_policy("mixed_bfloat16")
        before = _vm_kb("VmRSS")
        time_keras_like(lib, name, repeats)
    peak = _vm_kb("VmHWM")
    print("RESULT " + json.dumps({name: (peak / 1024, (peak - before) / 1024)}))


def rss_report(frameworks, names, args):
    print(f"\npeak resident set (MB) of a process fitting each workload, {args.threads} "
          "threads, one fresh process per framework and workload; 'after import': the peak "
          "minus the resident set right after the framework's import")
    print(f"{'workload':8s} {'framework':16s} {'peak MB':>9s} {'after import':>12s} {'fkeras/other':>13s}")
    for name in names:
        rows = {}
        for fw in frameworks:
            label, res = run(fw, [name], args, extra=["--rss"])
            if res:
                rows[label] = res[name]
        ours = rows.get("fkeras", (float("nan"),))[0]
        for label, (peak, grown) in rows.items():
            print(f"{name:8s} {label:16s} {peak:9.0f} {grown:12.0f} {ours / peak:13.2f}")


def leak_check(threads):
    import resource

    import fkeras

    fkeras.config.set_num_threads(threads)
    x, y = make_data("cnn")
    model = keras_like_model(fkeras, "cnn")
    model.fit(x[:256], y[:256], batch_size=64, epochs=1, verbose=0)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    rss = []
    for _ in range(20):
        model.fit(x[:256], y[:256], batch_size=64, epochs=1, verbose=0)
        with open("/proc/self/statm") as f:
            rss.append(int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE"))
    growth = (rss[-1] - rss[0]) / 1e6
    print(f"CNN, 20 epochs after the first: RSS growth {growth:.2f} MB (max RSS before: "
          f"{before / 1e3:.0f} MB) -> {'OK' if growth < 1.0 else 'LEAK'}")


FIRST_STEP = """
import time
t0 = time.perf_counter()
import numpy as np
import fkeras
t1 = time.perf_counter()
inp = fkeras.Input((10,))
h = fkeras.layers.Dense(20, activation="relu")(fkeras.layers.Dense(20, activation="relu")(inp))
model = fkeras.Model(inp, fkeras.layers.Dense(1, activation="sigmoid")(h))
model.compile(optimizer="adam", loss="binary_crossentropy")
model.fit(np.zeros((64, 10), "float32"), np.zeros((64, 1), "float32"), batch_size=64,
          verbose=0)
t2 = time.perf_counter()
print(f"FIRST {t2 - t0} {t1 - t0}")
"""


def first_step(args):
    """Time to first training step in fresh interpreters (Python start-up excluded)."""
    env = dict(os.environ, FKERAS_NUM_THREADS=str(args.threads))
    times = []
    for _ in range(args.repeats):
        out = subprocess.run([sys.executable, "-c", FIRST_STEP], env=env, capture_output=True,
                             text=True, timeout=600, check=True).stdout
        line = [ln for ln in out.splitlines() if ln.startswith("FIRST ")][0]
        times.append(tuple(map(float, line.split()[1:])))
    total, imp = (float(np.median([t[i] for t in times])) for i in (0, 1))
    print(f"time to first training step (import + build + compile + one fit step, tiny "
          f"model): {total:.3f} s, `import fkeras` {imp:.3f} s of it (median of "
          f"{args.repeats}) -> {'OK' if total < 1.0 else 'OVER 1 s'}")


def profile_step(name, threads, steps=10):
    """Per-kernel milliseconds per train step: fkeras (every device kernel wrapped in a timer)
    and torch eager (torch.profiler self CPU time per op), same model, batch and threads."""
    from collections import defaultdict

    import fkeras
    from fkeras.backend import devices

    fkeras.config.set_num_threads(threads)
    clock = time.process_time if threads == 1 else time.perf_counter
    batch, _, _, _, _ = WORKLOADS[name]
    x, y = make_data(name)
    model = keras_like_model(fkeras, name)
    model.fit(x[:batch * 2], y[:batch * 2], batch_size=batch, epochs=1, verbose=0)
    dev = devices.get_device("cpu")
    times, calls = defaultdict(float), defaultdict(int)

    def timed(key, fn):
        def call(*args):
            t = clock()
            out = fn(*args)
            times[key] += clock() - t
            calls[key] += 1
            return out
        return call

    original = dict(dev.kernels)
    for key, fn in original.items():
        dev.kernels[key] = timed(key, fn)
    t = clock()
    model.fit(x[:batch * steps], y[:batch * steps], batch_size=batch, epochs=1, verbose=0,
              shuffle=False)
    total = (clock() - t) / steps * 1e3
    dev.kernels.update(original)
    print(f"fkeras {name}: {total:.2f} ms/step, kernels {sum(times.values()) / steps * 1e3:.2f}")
    for key in sorted(times, key=times.get, reverse=True):
        print(f"  {key:32s} {times[key] / steps * 1e3:8.3f} ms  {calls[key] // steps:3d} calls")
    import torch

    torch.set_num_threads(threads)
    xs = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)) if x.ndim == 4 else x)
    ys = torch.from_numpy(np.asarray(y))
    model = torch_model(torch, name)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss() if name != "lstm" else torch.nn.MSELoss()

    def step(i):
        opt.zero_grad()
        loss_fn(model(xs[i * batch:(i + 1) * batch]), ys[i * batch:(i + 1) * batch]).backward()
        opt.step()

    for i in range(2):
        step(i)
    with torch.profiler.profile() as prof:
        t = clock()
        for i in range(steps):
            step(i)
        total = (clock() - t) / steps * 1e3
    print(f"torch {name}: {total:.2f} ms/step (profiled)")
    for ev in sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total,
                     reverse=True)[:14]:
        print(f"  {ev.key:32s} {ev.self_cpu_time_total / steps / 1e3:8.3f} ms  "
              f"{ev.count // steps:3d} calls")


def run(framework, names, args, extra=()):
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads),
               FKERAS_NUM_THREADS=str(args.threads))
    if args.gpu:
        env["BENCH_DEVICE"] = "cuda"
    label = framework
    if framework.startswith("keras-"):
        env["KERAS_BACKEND"] = framework.split("-", 1)[1]
        label = f"keras ({env['KERAS_BACKEND']})"
    cmd = [sys.executable, __file__, "--worker", framework, "--only", ",".join(names),
           "--repeats", str(args.repeats), "--threads", str(args.threads),
           "--batch-scale", str(args.batch_scale), *extra]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return label, json.loads(line[7:])
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
    print(f"  {label}: skipped ({tail[0][:120]})", file=sys.stderr)
    return label, None


def available(module):
    import importlib.util

    return importlib.util.find_spec(module) is not None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--frameworks", help="comma-separated subset, e.g. fkeras,torch")
    p.add_argument("--rounds", type=int, default=1,
                   help="run every framework this many times, in turns; report the medians")
    p.add_argument("--only", default=",".join(WORKLOADS))
    p.add_argument("--worker")
    p.add_argument("--leak", action="store_true")
    p.add_argument("--rss", action="store_true",
                   help="peak resident set of a fit, per framework and workload")
    p.add_argument("--first-step", action="store_true")
    p.add_argument("--profile", metavar="WORKLOAD")
    p.add_argument("--gpu", action="store_true",
                   help="fkeras on its cuda device against torch on CUDA (eager), batches "
                        "times --batch-scale")
    p.add_argument("--batch-scale", type=int, default=None,
                   help="multiply every workload's batch size (default 1; 8 with --gpu)")
    args = p.parse_args()
    scale = args.batch_scale or (8 if args.gpu else 1)
    if scale != 1:
        for key, (batch, *rest) in list(WORKLOADS.items()):
            WORKLOADS[key] = (batch * scale, *rest)
    args.batch_scale = scale
    names = [n for n in args.only.split(",") if n]
    if args.worker and args.rss:
        return rss_worker(args.worker, names[0], args.repeats, args.threads)
    if args.worker:
        return worker(args.worker, names, args.repeats, args.threads)
    if args.leak:
        return leak_check(args.threads)
    if args.first_step:
        return first_step(args)
    if args.profile:
        return profile_step(args.profile, args.threads)
    frameworks = ["fkeras"] + (["torch"] if available("torch") else [])
    if available("keras") and not args.gpu:
        # Keras 3 runs on every installed backend; jax and tensorflow are skipped when absent
        # (on the shared machine only torch is installed).
        frameworks += [f"keras-{b}" for b, mod in (("jax", "jax"), ("torch", "torch"),
                                                     ("tensorflow", "tensorflow"))
                       if available(mod)]
    if args.frameworks:
        # "fkeras-bf16" (the mixed_bfloat16 policy) runs only when named here.
        frameworks = [f for f in frameworks + ["fkeras-bf16"]
                      if f in args.frameworks.split(",")]
    if args.rss:
        return rss_report(frameworks, names, args)
    # Frameworks take turns for --rounds rounds (each a fresh process per framework) and the
    # medians of the rounds are reported: on a shared machine the load changes by the minute,
    # and one process per framework run back to back would compare different loads.
    rounds = {}
    for _ in range(args.rounds):
        for fw in frameworks:
            label, res = run(fw, names, args)
            if res:
                rounds.setdefault(label, []).append(res)
    results = {label: {n: tuple(float(np.median([r[n][i] for r in rs])) for i in (0, 1))
                       for n in names} for label, rs in rounds.items()}
    where = (f"on the GPU (fkeras cuda device vs torch CUDA eager), batches x{args.batch_scale}"
             if args.gpu else f"{args.threads} threads")
    print(f"\nsamples/s, median of {args.repeats} x {args.rounds} rounds, {where} "
          "(ratio: fkeras / other)")
    header = f"{'workload':8s} {'framework':16s} {'train':>10s} {'infer':>10s} " \
             f"{'train x':>8s} {'infer x':>8s} {'ms/step':>8s}"
    print(header)
    for name in names:
        ours = results["fkeras"][name]
        for label, res in results.items():
            train, infer = res[name]
            ms = WORKLOADS[name][0] / train * 1e3
            print(f"{name:8s} {label:16s} {train:10.0f} {infer:10.0f} {ours[0] / train:8.2f} "
                  f"{ours[1] / infer:8.2f} {ms:8.3f}")


if __name__ == "__main__":
    main()
