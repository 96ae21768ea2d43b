"""summary() of a model that is not built yet (a Sequential without an input shape): every
output shape is "?", layers that still have weights to create show "0 (unbuilt)", totals 0;
the rows compared with Keras 3's own summary when `keras` is installed."""

import importlib.util
import os
import re

import pytest

import fkeras


def _rows(lines):
    """(name (Type), shape, params) of each layer row: box-drawing (Keras 3) or ours."""
    rows = []
    for line in lines:
        if "│" in line:
            cells = [c.strip() for c in line.strip().strip("│").split("│")]
        else:
            cells = [c.strip() for c in re.split(r"\s{2,}", line.strip())]
        if len(cells) == 3 and "(" in cells[0] and cells[0] != "Layer (type)":
            rows.append(tuple(cells))
    return rows


def _summary(lib, layers_fn, name=None):
    lines = []
    model = lib.Sequential(layers_fn(lib), name=name)
    model.summary(print_fn=lambda line, *args, **kwargs: lines.extend(str(line).split("\n")))
    return lines


def _stack(lib):
    return [lib.layers.Dense(2, name="a"), lib.layers.Dropout(0.1, name="drop"),
            lib.layers.Dense(1, name="b")]


def test_unbuilt_sequential_summary():
    lines = _summary(fkeras, _stack, name="seq")
    assert lines[0] == 'Model: "seq"'
    assert _rows(lines) == [("a (Dense)", "?", "0 (unbuilt)"), ("drop (Dropout)", "?", "0"),
                            ("b (Dense)", "?", "0 (unbuilt)")]
    assert "Total params: 0 (0.00 Byte)" in lines
    empty = _summary(fkeras, lambda lib: [], name="empty")
    assert _rows(empty) == [] and "Trainable params: 0 (0.00 Byte)" in empty


def test_summary_after_build_is_the_built_table():
    model = fkeras.Sequential(_stack(fkeras))
    model.build((None, 3))
    lines = []
    model.summary(print_fn=lines.append)
    assert ("a (Dense)", "(None, 2)", "8") in _rows(lines)


def test_unbuilt_rows_match_keras():
    if "KERAS_BACKEND" not in os.environ and importlib.util.find_spec("torch") is not None:
        os.environ["KERAS_BACKEND"] = "torch"
    keras = pytest.importorskip("keras")
    ours, theirs = _summary(fkeras, _stack), _summary(keras, _stack)
    assert _rows(ours) == _rows(theirs)
    assert [ln.strip() for ln in ours if "params" in ln] == [
        ln.strip().replace(" B)", " Byte)") for ln in theirs if "params" in ln]
