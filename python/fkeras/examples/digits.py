"""Train a Functional CNN with BatchNormalization on the 8x8 digits shipped with fkeras.

    python -m fkeras.examples.digits [--epochs 12] [--batch-size 32] [--logdir logs/digits]
                                     [--dtype-policy mixed_bfloat16] [--device cuda]
    python examples/train_digits.py  (the same)

Prints the model summary, trains with a progress bar (validation on the last 10% of the
training set, taken before shuffling, as Keras does), writes TensorBoard logs when the
`tensorboard` package is installed, and prints the final test loss and accuracy. It reaches
about 98% test accuracy in a few seconds on 2 cores.
"""

import argparse
import time

import fkeras
from fkeras import layers

TENSORBOARD_HINT = ('TensorBoard logs skipped: the `tensorboard` package is not installed '
                    '(pip install "fkeras[tensorboard]").')


def load_digits():
    """The bundled digits as float32 images (N, 8, 8, 1) scaled to [0, 1] and uint8 labels."""
    (x_train, y_train), (x_test, y_test) = fkeras.datasets.digits.load_data()
    x_train = x_train.reshape(-1, 8, 8, 1).astype("float32") / 16.0
    x_test = x_test.reshape(-1, 8, 8, 1).astype("float32") / 16.0
    return (x_train, y_train), (x_test, y_test)


def conv_block(x, filters, name):
    """Conv2D (no bias: BatchNormalization's beta replaces it), BatchNormalization, ReLU.

    momentum=0.9 (Keras: 0.99): with about 40 steps per epoch the moving statistics that
    inference uses then settle within the first epoch.
    """
    x = layers.Conv2D(filters, 3, padding="same", use_bias=False, name=f"{name}_conv")(x)
    x = layers.BatchNormalization(momentum=0.9, name=f"{name}_bn")(x)
    return layers.Activation("relu", name=f"{name}_relu")(x)


def build_model():
    """8x8x1 -> two conv blocks -> pool -> conv block -> pool -> dense softmax over 10."""
    inputs = fkeras.Input(shape=(8, 8, 1), name="pixels")
    x = conv_block(inputs, 32, "block1")
    x = conv_block(x, 32, "block2")
    x = layers.MaxPooling2D(2, name="pool1")(x)
    x = conv_block(x, 64, "block3")
    x = layers.MaxPooling2D(2, name="pool2")(x)
    x = layers.Flatten(name="flatten")(x)
    x = layers.Dropout(0.25, name="dropout")(x)
    outputs = layers.Dense(10, activation="softmax", name="digit")(x)
    return fkeras.Model(inputs, outputs, name="digits_cnn")


def compile_model(model, learning_rate=0.003):
    model.compile(optimizer=fkeras.optimizers.Adam(learning_rate=learning_rate),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def tensorboard_callbacks(logdir):
    """[TensorBoard(logdir)] when the tensorboard package is installed, else [] (one line)."""
    if not logdir:
        return []
    try:
        callback = fkeras.callbacks.TensorBoard(log_dir=logdir)
    except ImportError:
        print(TENSORBOARD_HINT)
        return []
    print(f"TensorBoard logs: {logdir} (view with: tensorboard --logdir {logdir})")
    return [callback]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=0.003)
    parser.add_argument("--logdir", default="logs/train_digits",
                        help="TensorBoard log directory ('' to disable)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--verbose", default="auto", help="fit verbosity: auto, 0, 1 or 2")
    parser.add_argument("--dtype-policy", default="float32",
                        help="Keras dtype policy: float32 or mixed_bfloat16 (bfloat16 products)")
    parser.add_argument("--device", default="cpu",
                        help="where the model lives and trains: cpu, or cuda (a GPU build)")
    args = parser.parse_args(argv)
    verbose = args.verbose if args.verbose == "auto" else int(args.verbose)

    fkeras.utils.set_random_seed(args.seed)
    previous_policy = fkeras.config.dtype_policy()
    fkeras.config.set_dtype_policy(args.dtype_policy)
    try:
        with fkeras.device(args.device):
            return _train(args, verbose)
    finally:
        fkeras.config.set_dtype_policy(previous_policy)


def _train(args, verbose):
    (x_train, y_train), (x_test, y_test) = load_digits()
    model = compile_model(build_model(), args.learning_rate)
    model.summary()
    callbacks = tensorboard_callbacks(args.logdir)

    start = time.perf_counter()
    model.fit(x_train, y_train, batch_size=args.batch_size, epochs=args.epochs,
              validation_split=0.1, callbacks=callbacks, verbose=verbose)
    seconds = time.perf_counter() - start
    loss, accuracy = model.evaluate(x_test, y_test, verbose=0)
    samples = args.epochs * len(x_train)
    epochs = f"{args.epochs} epoch{'s' if args.epochs != 1 else ''}"
    print(f"Trained {epochs} in {seconds:.1f} s ({samples / seconds:.0f} training samples/s, "
          "validation included).")
    print(f"Test loss: {loss:.4f} - test accuracy: {accuracy:.4f}")
    return {"loss": loss, "accuracy": accuracy, "seconds": seconds}


if __name__ == "__main__":
    main()
