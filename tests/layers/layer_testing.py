"""run_layer_test: the checks every layer of the catalogue goes through.

One call checks, for a layer class and its constructor arguments:
1. the config is JSON-serializable and survives `from_config` (same config back);
2. symbolic call on `Input(batch_shape=...)`: output shape equals `expected_output_shape`, and
   `compute_output_shape` agrees;
3. eager call on random data: output shape, weight counts (trainable / non-trainable), and the
   output is finite;
4. one training step of `Model(inputs, layer(inputs))` with SGD and mean squared error: the loss
   is finite and every trainable weight moves (each receives a gradient);
5. optionally, `supports_masking` equals what the test says.

Inputs are float32 normal draws unless `input_data` is given (e.g. integer ids for Embedding).
A multi-input layer takes lists for `input_shape` / `input_data`.
"""

import json

import numpy as np

import fkeras
from fkeras import layers


def _as_list(x):
    return list(x) if isinstance(x, list) else [x]


def _shape_of(out):
    return [tuple(o.shape) for o in _as_list(out)]


def _random_like(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if np.issubdtype(np.dtype(dtype), np.integer):
        return rng.integers(0, 5, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _check_shapes(got, expected, what):
    expected = _as_list(expected) if isinstance(expected, list) else [expected]
    expected = [tuple(e) for e in expected]
    assert got == expected, f"{what}: got {got}, expected {expected}"


def run_layer_test(layer_cls, init_kwargs=None, input_shape=None, input_data=None,
                   input_dtype="float32", call_kwargs=None, expected_output_shape=None,
                   expected_num_trainable_weights=None, expected_num_non_trainable_weights=None,
                   expected_num_losses=None, supports_masking=None, run_training_check=True,
                   seed=0):
    """Runs the catalogue checks (see the module docstring); returns the eager output."""
    init_kwargs = dict(init_kwargs or {})
    call_kwargs = dict(call_kwargs or {})
    if input_data is None:
        shapes = input_shape if isinstance(input_shape, list) else [input_shape]
        data = [_random_like(s, input_dtype, seed + i) for i, s in enumerate(shapes)]
    else:
        data = _as_list(input_data)
        shapes = [tuple(np.shape(d)) for d in data]
    multi = isinstance(input_shape, list) or isinstance(input_data, list)
    feed = data if multi else data[0]

    # 1. Config round trip.
    layer = layer_cls(**init_kwargs)
    config = layer.get_config()
    assert json.loads(json.dumps(config)) is not None
    revived = layer_cls.from_config(json.loads(json.dumps(config)))
    assert json.dumps(revived.get_config(), sort_keys=True) == \
        json.dumps(config, sort_keys=True), "get_config/from_config round trip changed the config"
    if supports_masking is not None:
        assert bool(getattr(layer, "supports_masking", False)) == supports_masking

    # 2. Symbolic call.
    sym_inputs = [layers.Input(batch_shape=s, dtype=str(np.asarray(d).dtype))
                  for s, d in zip(shapes, data)]
    sym_layer = layer_cls(**init_kwargs)
    sym_out = sym_layer(sym_inputs if multi else sym_inputs[0], **call_kwargs)
    if expected_output_shape is not None:
        _check_shapes(_shape_of(sym_out), expected_output_shape, "symbolic output shape")
        computed = sym_layer.compute_output_shape(shapes if multi else shapes[0])
        computed = [tuple(c) for c in computed] if isinstance(computed, list) \
            else [tuple(computed)]
        _check_shapes(computed, expected_output_shape, "compute_output_shape")

    # 3. Eager call.
    eager_layer = layer_cls(**init_kwargs)
    out = eager_layer(feed, **call_kwargs)
    if expected_output_shape is not None:
        _check_shapes(_shape_of(out), expected_output_shape, "eager output shape")
    for o in _as_list(out):
        assert np.all(np.isfinite(np.asarray(o))), "eager output is not finite"
    if expected_num_trainable_weights is not None:
        assert len(eager_layer.trainable_weights) == expected_num_trainable_weights
    if expected_num_non_trainable_weights is not None:
        assert len(eager_layer.non_trainable_weights) == expected_num_non_trainable_weights
    if expected_num_losses is not None:
        assert len(eager_layer.losses) == expected_num_losses

    # 4. One training step through a Model.
    if run_training_check:
        train_layer = layer_cls(**init_kwargs)
        ins = [layers.Input(batch_shape=s, dtype=str(np.asarray(d).dtype))
               for s, d in zip(shapes, data)]
        outs = train_layer(ins if multi else ins[0], **call_kwargs)
        model = fkeras.Model(ins if multi else ins[0], outs)
        model.compile(optimizer=fkeras.optimizers.SGD(learning_rate=0.1), loss="mse")
        targets = [_random_like(tuple(o.shape), "float32", seed + 100 + i)
                   for i, o in enumerate(_as_list(model(feed, training=True)))]
        before = [np.array(w) for w in train_layer.trainable_weights]
        logs = model.train_on_batch(feed, targets if len(targets) > 1 else targets[0],
                                    return_dict=True)
        assert np.isfinite(logs["loss"]), f"training loss is not finite: {logs}"
        for w, b in zip(train_layer.trainable_weights, before):
            assert not np.array_equal(np.array(w), b), \
                f"trainable weight {w.path if hasattr(w, 'path') else w} did not change"
    return out
