"""Long fuzz runs from the command line (the test suite runs a short one).

    PYTHONPATH=python python tests/fuzz/run_fuzz.py --trials 2000 [--seed S] [--kernel K ...]

Runs `--trials` cases per kernel and prints per-kernel counts, the total trials, the time and
every failure with the seed that replays it. Exit status 1 when anything failed.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fuzzing import fuzz_all  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000, help="cases per kernel")
    parser.add_argument("--seed", type=int, default=int.from_bytes(os.urandom(3), "little"))
    parser.add_argument("--kernel", action="append", help="only this kernel (repeatable)")
    args = parser.parse_args()
    totals, failures, seconds = fuzz_all(args.seed, args.trials, args.kernel, log=print)
    print(f"seed {args.seed}: {sum(totals.values())} trials in {seconds:.1f} s: {totals}")
    for f in failures:
        print(f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
