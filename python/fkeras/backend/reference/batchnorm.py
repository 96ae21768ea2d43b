"""Reference batchnorm kernels (float64 spec; signatures as kernels.h)."""

KERNELS = {}
