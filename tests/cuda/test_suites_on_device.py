"""The suites of fkeras's Python layers run again with the cuda device as the default device,
on the host emulation of `_C_cuda` (tests/cuda/emulated_cuda.py, installed by
tests/conftest.py when FKERAS_TEST_DEVICE=emulated-cuda).

Every op, layer, model, trainer, callback, loss, metric, optimizer, saving and Keras-pattern
test then computes on device buffers (native ops) or through the host (the other ops), with
variables, optimizer state and batches on the device. A NumPy call on a device buffer, a lost
gradient or mask, a dtype changed by the placement all fail here as they would on a GPU.

The deselected tests check the cpu device's own machinery on purpose, listed with why.
"""

import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SUITES = ["ops", "layers", "models", "saving", "engine", "trainers", "callbacks", "losses",
          "metrics", "optimizers", "keras_patterns", "activations", "regularizers",
          "preprocessing", "utils", "datasets", "security", "export"]

CPU_ONLY = {
    # the C fast path is the cpu device's (any other device takes the Python dispatch)
    "tests/engine/test_fast_path.py": "the cpu device's C fast path",
    "tests/models/test_compiled_plan.py": "compiled inference plans run on cpu buffers only",
    "tests/models/test_eager_fast_path.py::test_tensor_inputs_and_a_new_batch_size":
        "counts calls of the cpu batch-1 latency path",
    # bf16 products are a variant of the cpu device (docs/keras_compatibility.md)
    "tests/layers/test_mixed_bfloat16.py": "bfloat16 products exist on the cpu device only",
    # these assert that buffers are NumPy arrays (zero-copy views of host memory)
    "tests/engine/test_gradient_tape.py::test_gradient_in_array_mode_gives_buffers":
        "asserts the gradient buffers are NumPy arrays",
    "tests/engine/test_tensor_operators.py::test_attributes_len_iter_numpy":
        "asserts np.asarray(t) is the host buffer itself",
    "tests/optimizers/test_optimizer_steps.py::test_packing_keeps_values_shapes_and_views":
        "inspects the flat buffers with NumPy",
    "tests/callbacks/test_swap_ema_remote.py": "inspects the optimizer buffers with NumPy",
    "tests/backend/test_devices.py": "asserts the default device is the cpu",
}


@pytest.mark.skipif(os.environ.get("FKERAS_TEST_DEVICE") is not None,
                    reason="already running on the emulated device")
def test_suites_pass_with_the_cuda_device_as_default():
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            *[os.path.join("tests", s) for s in SUITES]]
    for node in CPU_ONLY:
        args += ["--deselect", node]
    env = dict(os.environ, FKERAS_TEST_DEVICE="emulated-cuda")
    proc = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=1800)
    tail = "\n".join(proc.stdout.splitlines()[-40:])
    assert proc.returncode == 0, tail
    summary = proc.stdout.strip().splitlines()[-1]
    assert re.search(r"\d+ passed", summary) and not re.search(r"\d+ (failed|error)", summary), \
        summary
