"""Functional models with several inputs and outputs (the functional API and training guides'
ticket-routing and image/time-series models, shrunk): losses, loss weights and metrics given
as lists or dicts by output name, data as lists or dicts by input/output name, a loss left out
for one output, shared layers and nested models, against Keras 3."""

import numpy as np
import pytest
from patterns_parity import losses_trained, run_both, seed_weights

rng = np.random.RandomState(61)
TITLE = rng.randint(1, 50, size=(48, 5))
BODY = rng.randint(1, 50, size=(48, 7))
TAGS = rng.randint(0, 2, size=(48, 4)).astype("float32")
PRIORITY = rng.random_sample((48, 1)).astype("float32")
DEPT = np.eye(3, dtype="float32")[rng.randint(0, 3, size=48)]


def ticket_model(lib):
    title = lib.Input((None,), name="title")
    body = lib.Input((None,), name="body")
    tags = lib.Input((4,), name="tags")
    shared = lib.layers.Embedding(50, 4)
    t = lib.layers.GlobalAveragePooling1D()(shared(title))
    b = lib.layers.LSTM(3)(shared(body))
    x = lib.layers.concatenate([t, b, tags])
    priority = lib.layers.Dense(1, name="priority")(x)
    department = lib.layers.Dense(3, name="department")(x)
    model = lib.Model(inputs=[title, body, tags], outputs=[priority, department])
    seed_weights(model, seed=3)
    return model


COMPILES = {
    "lists": dict(loss=["binary_crossentropy", "categorical_crossentropy"],
                  loss_weights=[1.0, 0.2]),
    "dicts": dict(loss={"priority": "mse", "department": "categorical_crossentropy"},
                  loss_weights={"priority": 2.0, "department": 1.0}),
    "one_output_only": dict(loss=[None, "categorical_crossentropy"]),
}


@pytest.mark.parametrize("compile_kind", sorted(COMPILES))
@pytest.mark.parametrize("data_kind", ["lists", "dicts"])
def test_ticket_model_trains_like_keras(compile_kind, data_kind):
    if data_kind == "lists":
        x, y = [TITLE, BODY, TAGS], [PRIORITY, DEPT]
    else:
        x = {"title": TITLE, "body": BODY, "tags": TAGS}
        y = {"priority": PRIORITY, "department": DEPT}

    def train(lib):
        kwargs = dict(COMPILES[compile_kind])
        losses = kwargs["loss"]
        if compile_kind == "lists":
            losses = [lib.losses.BinaryCrossentropy(from_logits=True),
                      lib.losses.CategoricalCrossentropy(from_logits=True)]
        model = ticket_model(lib)
        model.compile(optimizer=lib.optimizers.RMSprop(1e-2), **dict(kwargs, loss=losses))
        hist = model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
        return {"loss": hist.history["loss"], "weights": model.get_weights(),
                "predict": model.predict(x, verbose=0)}

    fk, _ = run_both(train)
    losses_trained(fk["loss"])


def test_per_output_metrics_by_name_like_keras():
    img = rng.random_sample((32, 8, 8, 3)).astype("float32")
    ts = rng.random_sample((32, 6, 4)).astype("float32")
    score = rng.random_sample((32, 1)).astype("float32")
    cls = np.eye(5, dtype="float32")[rng.randint(0, 5, size=32)]

    def train(lib):
        image_input = lib.Input((8, 8, 3), name="img_input")
        ts_input = lib.Input((None, 4), name="ts_input")
        x1 = lib.layers.GlobalMaxPooling2D()(lib.layers.Conv2D(3, 3)(image_input))
        x2 = lib.layers.GlobalMaxPooling1D()(lib.layers.Conv1D(3, 3)(ts_input))
        x = lib.layers.concatenate([x1, x2])
        model = lib.Model([image_input, ts_input],
                          [lib.layers.Dense(1, name="score_output")(x),
                           lib.layers.Dense(5, name="class_output", activation="softmax")(x)])
        seed_weights(model, seed=4)
        model.compile(
            optimizer=lib.optimizers.RMSprop(1e-2),
            loss={"score_output": lib.losses.MeanSquaredError(),
                  "class_output": lib.losses.CategoricalCrossentropy()},
            metrics={"score_output": [lib.metrics.MeanAbsoluteError()],
                     "class_output": [lib.metrics.CategoricalAccuracy()]},
            loss_weights={"score_output": 2.0, "class_output": 1.0})
        hist = model.fit({"img_input": img, "ts_input": ts},
                         {"score_output": score, "class_output": cls},
                         batch_size=16, epochs=3, shuffle=False, verbose=0)
        res = model.evaluate([img, ts], [score, cls], verbose=0, return_dict=True)
        return {"history": hist.history, "eval": res, "weights": model.get_weights()}

    fk, _ = run_both(train)
    losses_trained(fk["history/loss"])


def test_nested_models_and_ensembles_like_keras():
    x = rng.standard_normal((32, 6)).astype("float32")
    y = rng.standard_normal((32, 1)).astype("float32")

    def train(lib):
        def member():
            inp = lib.Input((6,))
            return lib.Model(inp, lib.layers.Dense(1)(lib.layers.Dense(4, activation="relu")(inp)))

        inp = lib.Input((6,))
        out = lib.layers.average([member()(inp), member()(inp), member()(inp)])
        model = lib.Model(inp, out)
        seed_weights(model, seed=5)
        model.compile(optimizer="adam", loss="mse")
        hist = model.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
        return {"loss": hist.history["loss"], "weights": model.get_weights()}

    fk, _ = run_both(train)
    losses_trained(fk["loss"])
