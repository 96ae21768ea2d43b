"""1-thread process CPU time of batch-1 `model(x)` (us) and `predict` (samples/s), for A/B
checks on a loaded machine (bench/README.md, 2026-11-26 session 7):

    python bench/infer_cpu_time.py tiny,mlp,cnn,cnnbn   # prints {name: (latency_us, pred/s)}
    python bench/infer_cpu_time.py tiny,mlp --ort       # the same for onnxruntime (1 thread)
                                                        # on fkeras's ONNX export
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_fit  # noqa: E402
import fkeras  # noqa: E402

fkeras.config.set_num_threads(1)
out = {}
for name in sys.argv[1].split(","):
    x, _ = bench_fit.make_data(name)
    m = bench_fit.keras_like_model(fkeras, name)
    one = x[:1]
    if "--ort" in sys.argv:
        import onnxruntime as ort

        path = f"/tmp/fk_cpu_time_{name}_{os.getpid()}.onnx"
        m.export(path, format="onnx", verbose=False)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = opts.inter_op_num_threads = 1
        session = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        os.remove(path)
        feed = session.get_inputs()[0].name
        m = lambda b, s=session, f=feed: s.run(None, {f: b})  # noqa: E731
        m.predict = lambda xs, batch_size, verbose, m=m: [  # noqa: E731
            m(xs[i:i + batch_size]) for i in range(0, len(xs), batch_size)]
    for _ in range(3):
        m(one)
    ts = []
    n = 2000 if name == "tiny" else 200
    for _ in range(7):
        t = time.process_time()
        for _ in range(n):
            m(one)
        ts.append((time.process_time() - t) / n * 1e6)
    batch = bench_fit.WORKLOADS[name][0]
    xp = x[:batch * 16]
    m.predict(xp, batch_size=batch, verbose=0)
    ps = []
    for _ in range(5):
        t = time.process_time()
        m.predict(xp, batch_size=batch, verbose=0)
        ps.append(len(xp) / (time.process_time() - t))
    out[name] = (statistics.median(ts), statistics.median(ps))
print(repr(out))
