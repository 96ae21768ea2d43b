"""Inference (issue 17 item 4): `predict` throughput and batch-1 latency of the fit workloads,
fkeras against PyTorch eager (`torch.no_grad`), torch.compile (inductor, the same module),
Keras 3 on JAX and onnxruntime running fkeras's own ONNX export, one process each, taking turns.

    python bench/bench_inference.py [--threads 2] [--repeats 7] [--only mlp,cnn,cnnbn,lstm,tiny]

- predict: samples/s of `model.predict(x, batch_size=B)` over the workload's prediction data
  (B = the workload's batch), torch: the same batches through the module under no_grad,
  onnxruntime: `session.run` per batch;
- latency: median microseconds of one call on a single sample: `model(x1)` (fkeras; a line
  says so when it did not take the eager fast path),
  `module(x1)` (torch; torch.compile: the compiled module, warmed at both shapes),
  `model(x1)` (Keras 3 on JAX, run with KERAS_BACKEND=jax), `session.run` (onnxruntime).
Each figure is the median of --repeats; frameworks missing here are skipped. The models have
random weights (bench_fit.py's architectures); outputs are checked to agree first.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _median_time(fn, repeats, inner=1):
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - t) / inner)
    return statistics.median(times)


def run_fkeras(name, repeats, threads):
    import bench_fit
    import fkeras

    fkeras.config.set_num_threads(threads)
    batch = bench_fit.WORKLOADS[name][0]
    x, _ = bench_fit.make_data(name)
    model = bench_fit.keras_like_model(fkeras, name)
    predict = _median_time(lambda: model.predict(x, batch_size=batch, verbose=0), repeats)
    one = x[:1]
    latency = _median_time(lambda: model(one), repeats, inner=50)
    out = {"predict": len(x) / predict, "latency_us": latency * 1e6}
    try:  # whether `model(x)` took the eager fast path (models/eager_fast_path.py)
        from fkeras.models import eager_fast_path

        out["fast_path"] = eager_fast_path.state_of(model).taken > 0
    except ImportError:
        pass
    try:
        import onnxruntime as ort

        path = f"/tmp/fk_bench_{name}_{os.getpid()}.onnx"
        model.export(path, format="onnx", verbose=False)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        session = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        feed = session.get_inputs()[0].name
        batches = [x[i:i + batch] for i in range(0, len(x), batch)]
        np.testing.assert_allclose(session.run(None, {feed: batches[0]})[0],
                                   model.predict(batches[0], verbose=0), rtol=1e-3, atol=1e-4)
        run_all = lambda: [session.run(None, {feed: b}) for b in batches]  # noqa: E731
        out["ort_predict"] = len(x) / _median_time(run_all, repeats)
        out["ort_latency_us"] = _median_time(lambda: session.run(None, {feed: one}), repeats,
                                             inner=50) * 1e6
        os.remove(path)
    except ImportError:
        pass
    return out


def run_torch(name, repeats, threads, compiled=False):
    import bench_fit
    import torch

    torch.set_num_threads(threads)
    batch = bench_fit.WORKLOADS[name][0]
    x, _ = bench_fit.make_data(name)
    if x.ndim == 4:
        x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    xs = torch.from_numpy(x)
    module = bench_fit.torch_model(torch, name).eval()
    if compiled:
        module = torch.compile(module)

    def predict():
        with torch.no_grad():
            return [module(xs[i:i + batch]) for i in range(0, len(xs), batch)]

    def single():
        with torch.no_grad():
            return module(xs[:1])

    predict(), single()  # torch.compile: compile both shapes before timing
    return {"predict": len(x) / _median_time(predict, repeats),
            "latency_us": _median_time(single, repeats, inner=50) * 1e6}


def run_keras(name, repeats, threads):
    import bench_fit
    import keras

    batch = bench_fit.WORKLOADS[name][0]
    x, _ = bench_fit.make_data(name)
    model = bench_fit.keras_like_model(keras, name)
    one = x[:1]
    return {"predict": len(x) / _median_time(
                lambda: model.predict(x, batch_size=batch, verbose=0), repeats),
            "latency_us": _median_time(lambda: model(one), repeats, inner=50) * 1e6}


PEERS = {  # label: (worker function, extra environment)
    "torch": (run_torch, {}),
    "torch.compile": (lambda n, r, t: run_torch(n, r, t, compiled=True), {}),
    "keras-jax": (run_keras, {"KERAS_BACKEND": "jax"}),
}


def worker(framework, name, repeats, threads):
    fn = run_fkeras if framework == "fkeras" else PEERS[framework][0]
    print("RESULT " + json.dumps(fn(name, repeats, threads)))


def _available(module):
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _measure(framework, name, args, env):
    cmd = [sys.executable, __file__, "--worker", framework, name, "--threads",
           str(args.threads), "--repeats", str(args.repeats)]
    extra = PEERS.get(framework, (None, {}))[1]
    done = subprocess.run(cmd, capture_output=True, text=True, env=dict(env, **extra))
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    print(f"{name} {framework}: failed: {done.stderr.strip().splitlines()[-1:]}")
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--only", default="mlp,cnn,cnnbn,lstm,tiny")
    p.add_argument("--worker", nargs=2)
    p.add_argument("--peers", help="comma-separated subset of torch,torch.compile,keras-jax")
    args = p.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1], args.repeats, args.threads)
        return
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads),
               OPENBLAS_NUM_THREADS=str(args.threads))
    peers = [p for p, mod in (("torch", "torch"), ("torch.compile", "torch"),
                              ("keras-jax", "jax")) if _available(mod)]
    if not _available("keras"):
        peers = [p for p in peers if p != "keras-jax"]
    if args.peers:
        peers = [p for p in peers if p in args.peers.split(",")]
    labels = ["fkeras"] + peers + ["onnxrt"]
    rows = {}
    for name in args.only.split(","):
        res = {fw: _measure(fw, name, args, env) for fw in ["fkeras"] + peers}
        f = res.pop("fkeras")
        if not f:
            continue
        if "ort_predict" in f:
            res["onnxrt"] = {"predict": f["ort_predict"], "latency_us": f["ort_latency_us"]}
        rows[name] = (f, res)
        if f.get("fast_path") is False:
            print(f"{name}: model(x) took the full per-layer path (not the eager fast path)")
    print(f"\n{args.threads} threads, median of {args.repeats}")
    for key, unit, better in (("predict", "predict samples/s", max),
                              ("latency_us", "batch-1 latency us", min)):
        print(f"\n{unit}; x = fkeras's advantage over the best peer (> 1: fkeras ahead; "
              "onnxruntime excluded from the best for predict)")
        print(f"{'model':6s} " + " ".join(f"{lb:>13s}" for lb in labels) + f" {'x best':>7s}")
        for name, (f, res) in rows.items():
            vals = {lb: (f if lb == "fkeras" else res.get(lb) or {}).get(key) for lb in labels}
            cells = " ".join(f"{v:13.1f}" if v else f"{'-':>13s}" for v in vals.values())
            pool = [v for lb, v in vals.items() if v and lb != "fkeras"
                    and not (key == "predict" and lb == "onnxrt")]
            best = better(pool) if pool else None
            adv = (f[key] / best if key == "predict" else best / f[key]) if best else None
            print(f"{name:6s} {cells} {adv:7.2f}" if adv else f"{name:6s} {cells}")
        if key == "latency_us":
            print("target: fkeras <= torch eager and <= 1.5x onnxruntime, i.e. onnxrt/fkeras "
                  "latency >= 0.67:  " + ", ".join(
                      f"{n} {r['onnxrt']['latency_us'] / f['latency_us']:.2f}"
                      for n, (f, r) in rows.items() if "onnxrt" in r))


if __name__ == "__main__":
    main()
