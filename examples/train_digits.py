"""Train a Functional MLP on the 8x8 handwritten digits shipped with fkeras.

    python examples/train_digits.py [--epochs 10] [--logdir logs]

Prints the model summary, trains with a progress bar (validation on the last 10% of the
training set), writes TensorBoard logs when the `tensorboard` package is installed, and prints
the final test loss and accuracy.
"""

import argparse
import time

import numpy as np

import fkeras
from fkeras import layers


def build_model():
    inputs = fkeras.Input(shape=(64,), name="pixels")
    x = layers.Dense(128, activation="relu", name="hidden_1")(inputs)
    x = layers.Dense(64, activation="relu", name="hidden_2")(x)
    outputs = layers.Dense(10, activation="softmax", name="digit")(x)
    return fkeras.Model(inputs, outputs, name="digits_mlp")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--logdir", default="logs/train_digits")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    fkeras.utils.set_random_seed(args.seed)
    (x_train, y_train), (x_test, y_test) = fkeras.datasets.digits.load_data()
    x_train = x_train.reshape(-1, 64).astype("float32") / 16.0
    x_test = x_test.reshape(-1, 64).astype("float32") / 16.0

    model = build_model()
    try:
        model.summary()
    except (AttributeError, ImportError, NotImplementedError) as e:  # summary is optional
        print(f"(model.summary() unavailable: {e})")
    model.compile(optimizer=fkeras.optimizers.Adam(learning_rate=0.003),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])

    callbacks = []
    try:
        callbacks.append(fkeras.callbacks.TensorBoard(log_dir=args.logdir))
        print(f"TensorBoard logs: {args.logdir} (tensorboard --logdir {args.logdir})")
    except ImportError as e:
        print(f"No TensorBoard logs: {e}")

    start = time.perf_counter()
    model.fit(x_train, y_train, batch_size=args.batch_size, epochs=args.epochs,
              validation_split=0.1, callbacks=callbacks)
    seconds = time.perf_counter() - start

    loss, accuracy = model.evaluate(x_test, y_test, verbose=0)
    predictions = model.predict(x_test, verbose=0).argmax(axis=1)
    assert np.isclose((predictions == y_test).mean(), accuracy)
    print(f"Trained in {seconds:.1f} s. Test loss: {loss:.4f} - test accuracy: {accuracy:.4f}")


if __name__ == "__main__":
    main()
