"""Lets the activation tests use tests/ops/op_testing.py (fd_check)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "ops"))
