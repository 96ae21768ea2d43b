"""Keras 3's image augmentation layers (one module per layer, shared base in `base.py`)."""
