"""Output sizes and padding of windowed ops (convolution, pooling), TensorFlow's rules.

'valid': out = ceil((size - dilated_k + 1) / stride), no padding.
'same':  out = ceil(size / stride); the total padding is
         max((out - 1) * stride + dilated_k - size, 0), of which pad_before = total // 2 and the
         extra element (odd totals) goes after (bottom / right), as TensorFlow does.
where dilated_k = (k - 1) * dilation + 1.
"""


def conv_output_size_and_padding(size: int, k: int, stride: int = 1, dil: int = 1,
                                 padding: str = "valid") -> tuple:
    """Output length and leading padding of one spatial axis of a convolution or pooling.

    Args:
        size: input length along the axis.
        k: window (filter) length.
        stride: step between windows (>= 1).
        dil: dilation rate of the window (>= 1).
        padding: "valid" or "same" (case-insensitive).

    Returns:
        (out, pad_before): the output length and the zero padding before the first element;
        the padding after is whatever the kernel needs to cover the last window.

    Example:
        >>> conv_output_size_and_padding(5, 3, stride=2, padding="same")
        (3, 1)
    """
    if size < 0 or k < 1 or stride < 1 or dil < 1:
        raise ValueError(
            f"Invalid window arguments: expected size >= 0, k >= 1, stride >= 1, dil >= 1, "
            f"received size={size}, k={k}, stride={stride}, dil={dil}"
        )
    eff = (k - 1) * dil + 1
    mode = str(padding).lower()
    if mode == "valid":
        return max(-(-(size - eff + 1) // stride), 0), 0
    if mode == "same":
        out = -(-size // stride)
        total = max((out - 1) * stride + eff - size, 0)
        return out, total // 2
    raise ValueError(f'Invalid padding: expected "valid" or "same", received {padding!r}')
