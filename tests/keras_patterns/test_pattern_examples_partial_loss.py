"""A model with two outputs compiled with `loss=[loss_fn, None]` and fit with ONE target array
(keras-io's miniature GPT returns its logits and its last hidden state): Keras 3 gives the
targets to the outputs that have a loss, in order."""

import numpy as np
import pytest
from patterns_parity import losses_trained, run_both, seed_weights

rng = np.random.RandomState(23)
X = rng.standard_normal((32, 4)).astype("float32")
Y = rng.randint(0, 3, (32,)).astype("int32")
Y2 = rng.standard_normal((32, 2)).astype("float32")


def two_output_model(lib):
    inputs = lib.Input((4,))
    hidden = lib.layers.Dense(5, activation="tanh", name="hidden")(inputs)
    logits = lib.layers.Dense(3, name="logits")(hidden)
    extra = lib.layers.Dense(2, name="extra")(hidden)
    model = lib.Model(inputs, [logits, hidden, extra])
    seed_weights(model, seed=12)
    return model


@pytest.mark.parametrize("losses, targets", [
    (["ce", None, None], "y"),
    ([None, None, "mse"], "y2"),
    (["ce", None, "mse"], "both"),
], ids=["first_only", "last_only", "two_of_three"])
def test_targets_only_for_outputs_with_a_loss_like_keras(losses, targets):
    def train(lib):
        model = two_output_model(lib)
        loss = [None if name is None else
                lib.losses.SparseCategoricalCrossentropy(from_logits=True) if name == "ce"
                else "mse" for name in losses]
        model.compile(lib.optimizers.SGD(0.1), loss=loss)
        y = {"y": Y, "y2": Y2, "both": [Y, Y2]}[targets]
        history = model.fit(X, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
        losses_trained(history.history["loss"])
        return {"loss": history.history["loss"], "weights": model.get_weights(),
                "evaluate": model.evaluate(X, y, batch_size=8, verbose=0)}

    run_both(train)


def test_target_count_matching_neither_outputs_nor_losses_is_refused():
    import fkeras

    model = two_output_model(fkeras)
    model.compile("sgd", loss=["mse", None, None])
    with pytest.raises(ValueError, match="target arrays were passed"):
        model.fit(X, [Y2, Y2], verbose=0)
