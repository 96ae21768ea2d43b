"""Train a Functional CNN with BatchNormalization on the 8x8 digits shipped with fkeras.

    python examples/train_digits.py [--epochs 12] [--batch-size 32] [--logdir logs/digits]

The code lives in the package, `fkeras/examples/digits.py` (so `python -m
fkeras.examples.digits` runs the same thing after `pip install .`): it builds the model with
the Functional API, prints `model.summary()`, trains with a progress bar, writes TensorBoard
logs when the `tensorboard` package is installed, and prints the test loss and accuracy.
"""

from fkeras.examples.digits import main

if __name__ == "__main__":
    main()
