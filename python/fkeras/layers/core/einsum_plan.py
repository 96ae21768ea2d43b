"""EinsumDense's equation, read once: weight shapes (Keras 3's rules) and a GEMM plan.

An equation `I,W->O` (optionally with `...` at the start of I and O, or at the end of I and O)
is supported when each letter plays one of three roles:
- free: in I and O, not in W (batch-like axes of the input, kept);
- contracted: in I and W, not in O (summed over);
- produced: in W and O, not in I (the kernel's output axes).
The product is then one 2-D GEMM: the input transposed to (free..., contracted...) and viewed
as (F, C), times the kernel transposed to (contracted..., produced...) viewed as (C, P); the
(F, P) result is viewed as (free..., produced...) and transposed to O's order. Every equation
Keras's layers build (Dense-like "ab,bc->ac", "abc,cd->abd", MultiHeadAttention's projections
"abc,cde->abde" / "abcd,cde->abe", GroupedQueryAttention's "bqm,muh->bquh") is of this kind, and
for them both transposes are the identity (no copy). A letter shared by all three specs (a
batched contraction) or one that appears in a single spec is refused with a ValueError.
"""

import re
import string

import numpy as np

_EQUATION = re.compile(r"^([a-zA-Z.]+),([a-zA-Z]+)->([a-zA-Z.]+)$")


class EinsumPlan:
    """The parsed equation for a given input rank.

    Attributes:
        input_spec, weight_spec, output_spec: the letter strings, `...` expanded.
        left_elided, elided: where `...` was and how many axes it stands for.
        free, contracted, produced: the letters of each role, in input / weight order.
    """

    def __init__(self, equation, input_rank, layer_name="einsum_dense"):
        self.equation = equation
        text = equation.replace(" ", "") if isinstance(equation, str) else ""
        m = _EQUATION.match(text)
        if m is None:
            raise ValueError(_invalid(equation))
        ins, w, out = m.groups()
        self.left_elided = ins.startswith("...")
        right = ins.endswith("...") and not self.left_elided
        if ins.count("...") != out.count("...") or ins.replace("...", "").count(".") or \
                out.replace("...", "").count(".") or (ins.count("...") and not (
                    (self.left_elided and out.startswith("..."))
                    or (right and out.endswith("...") and len(ins) > 4))):
            raise ValueError(_invalid(equation))
        core_in = ins.replace("...", "")
        self.elided = input_rank - len(core_in) if "..." in ins else 0
        if self.elided < 0 or ("..." not in ins and input_rank != len(ins)):
            raise ValueError(f'Layer "{layer_name}": the equation "{equation}" expects inputs '
                             f"of rank {len(core_in)}, received rank {input_rank}.")
        spare = [c for c in string.ascii_uppercase + string.ascii_lowercase
                 if c not in ins + w + out][:self.elided]
        fill = "".join(spare)
        self.input_spec = ins.replace("...", fill)
        self.output_spec = out.replace("...", fill)
        self.weight_spec = w
        self._core_specs = (core_in, w, out.replace("...", ""))
        self._roles(layer_name)

    def _roles(self, layer_name):
        i, w, o = self.input_spec, self.weight_spec, self.output_spec
        for spec in (i, w, o):
            if len(set(spec)) != len(spec):
                raise ValueError(self._unsupported(layer_name, f"'{spec}' repeats a letter"))
        self.free = [c for c in i if c in o and c not in w]
        self.contracted = [c for c in i if c in w and c not in o]
        self.produced = [c for c in w if c in o and c not in i]
        roles = set(self.free) | set(self.contracted) | set(self.produced)
        odd = [c for c in i + w + o if c not in roles]
        if odd:
            raise ValueError(self._unsupported(
                layer_name, f"the letter(s) {sorted(set(odd))} are not exactly one of: kept from "
                "the input (input and output), contracted (input and kernel), or produced by "
                "the kernel (kernel and output)"))

    def _unsupported(self, layer_name, why):
        return (f'Layer "{layer_name}": the einsum equation "{self.equation}" is not supported '
                f"by fkeras's EinsumDense: {why}.")

    # ---- shapes (Keras 3's rules) ----
    def shapes(self, input_shape, partial_output_shape, bias_axes):
        """(kernel_shape, bias_shape or None, full output shape, input_axes, output_axes).

        `partial_output_shape` is the output shape without the batch axis (and without the
        elided axes), None entries meaning "as the input"."""
        input_shape = tuple(input_shape)
        core_in, w, core_out = self._core_specs
        partial = list(partial_output_shape)
        output = [input_shape[0]] + partial
        if self.elided > 0 and self.left_elided:
            for k in range(1, self.elided):
                output.insert(1, input_shape[k])
        elif self.elided > 0:
            output.extend(input_shape[len(input_shape) - self.elided:])
        if len(output) != len(self.output_spec):
            raise ValueError(f"The `output_shape` {tuple(partial_output_shape)} does not match "
                             f'the output spec "{core_out}" of the equation "{self.equation}": '
                             f"expected {len(core_out) - 1} entries (the batch axis excluded).")
        in_dim = {c: input_shape[k] for k, c in enumerate(self.input_spec)}
        for k, c in enumerate(self.output_spec):
            if c in in_dim:
                if output[k] is not None and in_dim[c] is not None and output[k] != in_dim[c]:
                    raise ValueError("Input shape and output shape do not match at shared "
                                     f"dimension '{c}'. Input shape is {in_dim[c]}, and output "
                                     f"shape is {output[k]}.")
                if output[k] is None:
                    output[k] = in_dim[c]
        out_dim = dict(zip(self.output_spec, output))
        kernel_shape, input_axes, output_axes = [], [], []
        for k, c in enumerate(w):
            if c in out_dim:
                kernel_shape.append(out_dim[c])
                output_axes.append(k)
            else:
                kernel_shape.append(in_dim[c])
                input_axes.append(k)
        if any(d is None for d in kernel_shape):
            raise ValueError(f"The kernel shape {tuple(kernel_shape)} of the equation "
                             f'"{self.equation}" has an undefined dimension: define it in '
                             f"`output_shape` or in the input shape {input_shape}.")
        return (tuple(kernel_shape), self._bias_shape(bias_axes, out_dim), tuple(output),
                input_axes, output_axes)

    def _bias_shape(self, bias_axes, out_dim):
        if bias_axes is None:
            return None
        core_out = self._core_specs[2]
        for c in bias_axes:
            if c not in core_out:
                raise ValueError(f"Bias dimension '{c}' was requested, but is not part of the "
                                 f"output spec '{core_out}'")
        first = min(core_out.find(c) for c in bias_axes)
        shape = [out_dim[c] if c in bias_axes else 1 for c in core_out[first:]]
        if not self.left_elided:
            shape.extend([1] * self.elided)
        return tuple(shape)

    # ---- the product ----
    def contract(self, ops, x, kernel):
        """einsum(equation, x, kernel) as transpose / reshape / one 2-D matmul (differentiable
        through the ops)."""
        i, w, o = self.input_spec, self.weight_spec, self.output_spec
        x_perm = [i.index(c) for c in self.free + self.contracted]
        k_perm = [w.index(c) for c in self.contracted + self.produced]
        xs, ks = tuple(x.shape), tuple(kernel.shape)
        free_dims = [xs[i.index(c)] for c in self.free]
        prod_dims = [ks[w.index(c)] for c in self.produced]
        c_size = int(np.prod([xs[i.index(c)] for c in self.contracted], dtype=np.int64))
        if x_perm != sorted(x_perm):
            x = ops.transpose(x, x_perm)
        if k_perm != sorted(k_perm):
            kernel = ops.transpose(kernel, k_perm)
        f_size = int(np.prod(free_dims, dtype=np.int64))
        p_size = int(np.prod(prod_dims, dtype=np.int64))
        y = ops.matmul(ops.reshape(x, (f_size, c_size)), ops.reshape(kernel, (c_size, p_size)))
        y = ops.reshape(y, tuple(free_dims + prod_dims))
        order = self.free + self.produced
        y_perm = [order.index(c) for c in o]
        if y_perm != sorted(y_perm):
            y = ops.transpose(y, y_perm)
        return y


    def contract_add(self, ops, x, kernel, bias):
        """contract(x, kernel) + bias. When the product needs no transpose and the bias spans
        exactly the produced axes (Dense-like projections such as MultiHeadAttention's
        "abc,cde->abde" with bias "de"), one fused dense op (GEMM + bias, its bias gradient in
        the same kernel) replaces the matmul and the broadcast add."""
        i, w, o = self.input_spec, self.weight_spec, self.output_spec
        xs, ks = tuple(x.shape), tuple(kernel.shape)
        prod_dims = tuple(ks[w.index(c)] for c in self.produced)
        plain = ([i.index(c) for c in self.free + self.contracted] == list(range(len(i)))
                 and [w.index(c) for c in self.contracted + self.produced]
                 == list(range(len(w)))
                 and list(o) == list(self.free + self.produced)
                 and (bias is None or tuple(bias.shape) == prod_dims))
        if not plain:
            y = self.contract(ops, x, kernel)
            return y if bias is None else ops.add(y, bias)
        from fkeras.ops.nn import dense

        free_dims = tuple(xs[i.index(c)] for c in self.free)
        f_size = int(np.prod(free_dims, dtype=np.int64))
        c_size = int(np.prod([xs[i.index(c)] for c in self.contracted], dtype=np.int64))
        p_size = int(np.prod(prod_dims, dtype=np.int64))
        y = dense(ops.reshape(x, (f_size, c_size)), ops.reshape(kernel, (c_size, p_size)),
                  None if bias is None else ops.reshape(bias, (p_size,)))
        return ops.reshape(y, free_dims + prod_dims)


def _invalid(equation):
    return (f"Invalid einsum equation '{equation}'. Equations must be in the form [X],[Y]->[Z], "
            "...[X],[Y]->...[Z], or [X]...,[Y]->[Z]....")
