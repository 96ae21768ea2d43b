"""Activation layers: ReLU, LeakyReLU, PReLU, ELU, Softmax (the Activation layer is in core)."""
