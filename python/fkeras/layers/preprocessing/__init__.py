"""Keras 3's preprocessing layers (numeric and image ones here; one file per layer family)."""
