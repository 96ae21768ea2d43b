"""Peak memory while fkeras refuses a zip bomb and an h5 bomb (run as a script; prints JSON).

For each hostile file: the tracemalloc peak of the refusing call, and the growth of the
process's peak RSS (ru_maxrss) over it, next to the same call on the benign file of the same
model (the cost of building the model, which any load pays).
"""

import json
import os
import resource
import sys
import tempfile
import tracemalloc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "security"))

import fkeras  # noqa: E402
import hostile_files as hf  # noqa: E402


def measure(call):
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    tracemalloc.start()
    error = None
    try:
        call()
    except (ValueError, TypeError) as e:
        error = type(e).__name__
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"traced_peak": peak, "rss_growth": rss1 - rss0, "error": error}


def main():
    out = {}
    with tempfile.TemporaryDirectory() as d:
        model = hf.dense_model()
        out["model_bytes"] = sum(w.numpy().nbytes for w in model.weights)
        benign = os.path.join(d, "ok.keras")
        model.save(benign)
        model.save_weights(os.path.join(d, "ok.weights.h5"))
        zip_bomb = hf.write_zip_bomb(os.path.join(d, "zip.keras"), hf.base_config(),
                                     "model.weights.h5", 64, 6 * 2**30)
        h5_bomb = os.path.join(d, "bomb.weights.h5")
        with open(h5_bomb, "wb") as f:
            f.write(hf.h5_bomb_bytes())
        h5_keras = hf.write_keras(os.path.join(d, "h5.keras"), hf.base_config(),
                                  weights=hf.h5_bomb_bytes())
        for _ in range(2):  # warm: lazy imports and caches out of the figures
            fkeras.models.load_model(benign)
            model.load_weights(os.path.join(d, "ok.weights.h5"))
        out["benign .keras"] = measure(lambda: fkeras.models.load_model(benign))
        out["benign .weights.h5"] = measure(
            lambda: model.load_weights(os.path.join(d, "ok.weights.h5")))
        for name, path, call in [
                ("zip bomb 6 GiB", zip_bomb, lambda: fkeras.models.load_model(zip_bomb)),
                ("h5 bomb 16 GiB in .keras", h5_keras,
                 lambda: fkeras.models.load_model(h5_keras)),
                ("h5 bomb 16 GiB .weights.h5", h5_bomb, lambda: model.load_weights(h5_bomb))]:
            out[name] = {"file_size": os.path.getsize(path), **measure(call)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
