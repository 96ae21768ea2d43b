"""fkeras has every public name of Keras 3.15's API modules, with Keras's signatures.

Compares against the installed Keras (skipped without it). The one list of deliberate gaps is
EXCEPTIONS below (mirrored in docs/ops_coverage.md); ADDED_BY_PARALLEL_WORK holds the names
other branches are adding at the time of writing (emptied once they are merged).
"""

import importlib
import importlib.util
import inspect
import os

import pytest

import fkeras

keras = pytest.importorskip("keras")

_TOOL = os.path.join(os.path.dirname(__file__), os.pardir, "tools", "api_coverage.py")
_spec = importlib.util.spec_from_file_location("api_coverage", _TOOL)
_tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_tool)
MODULES = _tool.MODULES  # ops, activations, losses, ..., models
GROUPINGS = ["ops.nn", "ops.linalg", "ops.numpy", "ops.image"]

# name -> why fkeras does not have it. Keys are "<module>.<name>" ("keras.<name>" at the top
# level) or "signature:<module>.<name>" for a signature that differs on purpose.
EXCEPTIONS = {
    "layers.JaxLayer": "wraps a JAX function; fkeras runs no JAX",
    "layers.FlaxLayer": "wraps a Flax module; fkeras runs no JAX",
    "layers.TorchModuleWrapper": "wraps a torch.nn.Module; fkeras's layers run on its own "
                                 "kernels, not torch's autograd",
    "layers.TFSMLayer": "loads a TensorFlow SavedModel; fkeras has no TensorFlow runtime",
    "callbacks.OrbaxCheckpoint": "Orbax is JAX's checkpoint library",
    "quantizers.abs_max_quantize_grouped_with_zero_point": "int4 (grouped, zero point) "
                                                           "quantization is not implemented",
    "quantizers.Int4QuantizationConfig": "int4 quantization is not implemented (int8 only)",
    "quantizers.Float8QuantizationConfig": "float8 quantization is not implemented (no "
                                           "float8 dtype)",
    "quantizers.GPTQConfig": "GPTQ quantization is not implemented (int8 only)",
    "quantizers.AWQConfig": "AWQ quantization is not implemented (int8 only)",
    "quantizers.pack_int4": "int4 quantization is not implemented (int8 only)",
    "quantizers.unpack_int4": "int4 quantization is not implemented (int8 only)",
    "quantizers.compute_float8_scale": "float8 quantization is not implemented (no float8 "
                                       "dtype)",
    "quantizers.compute_float8_amax_history": "float8 quantization is not implemented (no "
                                              "float8 dtype)",
    "quantizers.fake_quant_with_min_max_vars": "quantization-aware training (fake quant) is not "
                                               "implemented",
    "keras.StatelessScope": "fkeras assigns variables eagerly; there is no stateless "
                            "(functional) variable mapping to collect",
    "keras.SymbolicScope": "a JAX/TF tracing marker; fkeras traces with KerasTensors directly",
    "keras.distillation": "Keras 3.12's knowledge-distillation API is not implemented",
    "keras.wrappers": "scikit-learn wrappers (SKLearnClassifier...) are not implemented",
    "keras.legacy": "Keras 2's saving/preprocessing shims",
    "keras.visualization": "bounding-box/segmentation-mask plotting (matplotlib) is not "
                           "implemented",
    "keras.src": "Keras's private implementation package",
    "signature:ops.conv_transpose": "an extra trailing `bias=None` keyword (the "
                                    "Conv*Transpose layers' fused bias); Keras's calls work "
                                    "unchanged",
}

# Names other helpers' branches add at the time of writing; allowed to be missing here.
ADDED_BY_PARALLEL_WORK = set()  # every parallel branch is merged


def _public(module):
    return sorted(n for n in dir(module) if not n.startswith("_"))


def _missing(keras_path, fkeras_module):
    prefix = keras_path.replace("keras.", "", 1) if keras_path != "keras" else "keras"
    theirs = importlib.import_module(keras_path)
    gaps = []
    for name in _public(theirs):
        key = f"{prefix}.{name}"
        if key in EXCEPTIONS or key in ADDED_BY_PARALLEL_WORK:
            continue
        if fkeras_module is None or not hasattr(fkeras_module, name):
            gaps.append(key)
    return gaps


@pytest.mark.parametrize("module", MODULES)
def test_module_has_every_keras_name(module):
    ours = importlib.import_module(f"fkeras.{module}")
    assert _missing(f"keras.{module}", ours) == []


@pytest.mark.parametrize("grouping", GROUPINGS)
def test_ops_grouping_has_every_keras_name(grouping):
    if grouping in ADDED_BY_PARALLEL_WORK and not hasattr(fkeras.ops, grouping.split(".")[1]):
        pytest.skip(f"{grouping} is added by a parallel branch")
    ours = getattr(fkeras.ops, grouping.split(".")[1])
    assert _missing(f"keras.{grouping}", ours) == []


def test_top_level_has_every_keras_name():
    assert _missing("keras", fkeras) == []


def test_exception_lists_name_real_keras_names():
    # A stale entry (renamed in Keras, or a typo) must not hide a real gap.
    for key in [*EXCEPTIONS, *ADDED_BY_PARALLEL_WORK]:
        path = key.replace("signature:", "")
        module, _, name = path.rpartition(".")
        target = keras if module == "keras" else importlib.import_module(f"keras.{module}")
        assert hasattr(target, name), key
        if not key.startswith("signature:") and key in EXCEPTIONS:
            ours = fkeras if module == "keras" else importlib.import_module(f"fkeras.{module}")
            assert not hasattr(ours, name), f"{key} exists now: drop it from EXCEPTIONS"


def test_exceptions_are_documented():
    doc = open(os.path.join(os.path.dirname(__file__), os.pardir, "docs", "ops_coverage.md"),
               encoding="utf-8").read()
    for key in EXCEPTIONS:
        assert f"`{key}`" in doc, f"{key} is not listed in docs/ops_coverage.md"


# ------------------------------------------------------------------------- signatures
def _signature_targets():
    """(module, name, keras object, fkeras object) for the callables whose signatures must
    equal Keras's: the functions of ops/activations/losses/metrics/random, the constructors
    of the initializer/regularizer/constraint classes, the functions of mixed_precision, tree
    and preprocessing."""
    targets = []
    for module in ("ops", "activations", "losses", "metrics", "random", "initializers",
                   "regularizers", "constraints", "mixed_precision", "tree", "preprocessing",
                   "preprocessing.image", "preprocessing.sequence"):
        theirs = importlib.import_module(f"keras.{module}")
        ours = importlib.import_module(f"fkeras.{module}")
        for name in _public(theirs):
            k, f = getattr(theirs, name), getattr(ours, name, None)
            if f is None or inspect.ismodule(k) or not callable(k):
                continue
            if inspect.isclass(k):
                if module not in ("initializers", "regularizers", "constraints"):
                    continue
                k, f = k.__init__, f.__init__
            targets.append(pytest.param(module, name, k, f, id=f"{module}.{name}"))
    return targets


def _params(fn):
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize("module,name,theirs,ours", _signature_targets())
def test_signature_matches_keras(module, name, theirs, ours):
    want, got = _params(theirs), _params(ours)
    if f"signature:{module}.{name}" in EXCEPTIONS:
        # fkeras-only arguments may only follow Keras's, as keywords with defaults.
        assert got[:len(want)] == want
        assert all(default is not inspect.Parameter.empty for _, _, default in got[len(want):])
        return
    assert got == want, f"keras.{module}.{name}{inspect.signature(theirs)} vs " \
                        f"fkeras{inspect.signature(ours)}"
