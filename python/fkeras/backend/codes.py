"""Activation codes shared with the kernels (mirror of `fk::Activation` in kernels.h)."""

LINEAR = 0
RELU = 1
SIGMOID = 2
TANH = 3
ELU = 4
SELU = 5
GELU = 6
GELU_TANH = 7
SOFTPLUS = 8
SOFTSIGN = 9
SWISH = 10
HARD_SIGMOID = 11
EXPONENTIAL = 12
LEAKY_RELU = 13

ACTIVATION_CODES = {
    "linear": LINEAR,
    "relu": RELU,
    "sigmoid": SIGMOID,
    "tanh": TANH,
    "elu": ELU,
    "selu": SELU,
    "gelu": GELU,
    "gelu_tanh": GELU_TANH,
    "softplus": SOFTPLUS,
    "softsign": SOFTSIGN,
    "swish": SWISH,
    "silu": SWISH,
    "hard_sigmoid": HARD_SIGMOID,
    "exponential": EXPONENTIAL,
    "leaky_relu": LEAKY_RELU,
}

# The recurrent kernels take derivatives from the activation's output: only these qualify.
RECURRENT_ACTIVATIONS = (LINEAR, RELU, SIGMOID, TANH, HARD_SIGMOID)
