"""The digits CNN of train_digits.py, data-parallel over MPI processes.

    mpiexec -n 2 python examples/train_digits_mpi.py [--epochs 12] [--batch-size 32]
    mpiexec -n 8 -f hostfile python examples/train_digits_mpi.py   (several machines)

The training code is the single-process script's; the two `fkeras.distribution` lines are
what makes it data-parallel. `--batch-size` stays the global batch (each of N processes
computes batch_size / N rows per step). Rank 0 prints progress; the others stay quiet.
Run without mpiexec it trains in one process, exactly as train_digits.py does.
"""

import argparse
import time

import fkeras
from fkeras.examples.digits import build_model, compile_model, load_digits


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=0.003)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--verbose", default="auto", help="fit verbosity: auto, 0, 1 or 2")
    args = parser.parse_args(argv)
    verbose = args.verbose if args.verbose == "auto" else int(args.verbose)

    fkeras.distribution.initialize()                                          # added line 1
    fkeras.distribution.set_distribution(fkeras.distribution.DataParallel())  # added line 2

    rank0 = fkeras.distribution.is_rank_zero()
    fkeras.utils.set_random_seed(args.seed)
    (x_train, y_train), (x_test, y_test) = load_digits()
    model = compile_model(build_model(), args.learning_rate)
    start = time.perf_counter()
    model.fit(x_train, y_train, batch_size=args.batch_size, epochs=args.epochs,
              validation_split=0.1, verbose=verbose)
    seconds = time.perf_counter() - start
    loss, accuracy = model.evaluate(x_test, y_test, verbose=0)
    if rank0:
        n = fkeras.distribution.num_processes()
        print(f"{n} process{'es' if n > 1 else ''}: {args.epochs} epochs in {seconds:.1f} s "
              f"({args.epochs * len(x_train) / seconds:.0f} training samples/s).")
        print(f"Test loss: {loss:.4f} - test accuracy: {accuracy:.4f}")
    return {"loss": loss, "accuracy": accuracy, "seconds": seconds}


if __name__ == "__main__":
    main()
