"""A user-written train_step/test_step gets its batch as given (keras-io's metric learning
stacks anchor/positive pairs into one array that is not shaped like the model's input): Keras
3 checks x against the model's inputs only for its built-in steps. Trained values compared
with Keras 3 (torch) where installed."""

import numpy as np
import pytest
from patterns_parity import losses_trained, no_grad, run_both, seed_weights, tape

import fkeras

rng = np.random.RandomState(61)
PAIRS = rng.standard_normal((16, 2, 4)).astype("float32")  # (samples, anchor/positive, features)


def pair_model(lib, with_test_step=True):
    class PairModel(lib.Model):
        def train_step(self, data):
            anchors, positives = data[:, 0], data[:, 1]
            with tape(lib) as t:
                a = self(anchors, training=True)
                p = self(positives, training=True)
                logits = lib.ops.matmul(a, lib.ops.transpose(p)) / 0.2
                labels = lib.ops.arange(lib.ops.shape(logits)[0])
                loss = self.loss_fn(labels, logits)
            grads = t.gradient(loss, self.trainable_variables)
            with no_grad(lib):
                self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            return {"pair_loss": loss}

        if with_test_step:
            def test_step(self, data):
                a, p = self(data[:, 0]), self(data[:, 1])
                return {"pair_gap": lib.ops.mean(lib.ops.abs(a - p))}

    inputs = lib.Input((4,))
    outputs = lib.layers.UnitNormalization()(lib.layers.Dense(3)(inputs))
    model = PairModel(inputs, outputs)
    model.loss_fn = lib.losses.SparseCategoricalCrossentropy(from_logits=True)
    return model


def test_custom_steps_receive_stacked_pairs_like_keras():
    def train(lib):
        model = pair_model(lib)
        seed_weights(model, seed=4)
        model.compile(optimizer=lib.optimizers.SGD(0.1))
        history = model.fit(PAIRS, batch_size=8, epochs=3, shuffle=False, verbose=0)
        losses_trained(history.history["pair_loss"])
        gap = model.evaluate(PAIRS, batch_size=8, verbose=0, return_dict=True)["pair_gap"]
        return {"loss": history.history["pair_loss"], "gap": gap,
                "weights": model.get_weights()}

    run_both(train, rtol=2e-4, atol=1e-6)


def test_py_dataset_batch_reaches_custom_step_unchanged():
    seen = []

    class Pairs(fkeras.utils.PyDataset):
        def __len__(self):
            return 2

        def __getitem__(self, index):
            return PAIRS[index * 8:(index + 1) * 8]

    model = pair_model(fkeras)
    original = type(model).train_step

    def spy(self, data):
        seen.append(tuple(data.shape))
        return original(self, data)

    type(model).train_step = spy
    model.compile(optimizer=fkeras.optimizers.SGD(0.1))
    model.fit(Pairs(), epochs=1, verbose=0)
    assert seen == [(8, 2, 4), (8, 2, 4)]


@pytest.mark.parametrize("method", ["fit", "evaluate", "predict"])
def test_built_in_steps_still_check_inputs(method):
    inputs = fkeras.Input((4,))
    model = fkeras.Model(inputs, fkeras.layers.Dense(3)(inputs))
    model.compile(optimizer="sgd", loss="mse")
    y = np.zeros((16, 3), "float32")
    with pytest.raises(ValueError, match="expected input_layer\\w* to have 2 dimensions"):
        if method == "fit":
            model.fit(PAIRS, y, verbose=0)
        elif method == "evaluate":
            model.evaluate(PAIRS, y, verbose=0)
        else:
            model.predict(PAIRS, verbose=0)
