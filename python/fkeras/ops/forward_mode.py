"""keras.ops.jvp: Jacobian-vector products.

fkeras differentiates in reverse mode only, so `jvp` builds each output's Jacobian with one
reverse pass per output element (`GradientTape.jacobian`) and contracts it with the tangents.
The result is exact (no finite differences); its cost grows with the output size, so it suits
the small functions `jvp` is used on in Keras code (linearization checks, Hessian-vector
products of scalar losses need second order, which fkeras does not support).
"""

import numpy as np

from fkeras.backend import devices as _devices
from fkeras.engine import tape as _tape
from fkeras.engine.tensor import Tensor, run_user
from fkeras.engine.variable import Variable
from fkeras.utils import nest


def _array(x):
    return _devices.host_array(x)


def jvp(fun, primals, tangents, has_aux=False):
    """`(fun(*primals), J(primals) @ tangents)` (and `aux` when `has_aux`).

    Args:
        fun: a function of tensors returning a tensor or a structure of tensors (with
            `has_aux`, a pair `(outputs, aux)`).
        primals: a tuple or list of the inputs.
        tangents: the same structure and shapes as `primals`.
        has_aux: whether `fun` returns `(outputs, aux)`.
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: `primals` and `tangents` must be tuples or lists of tensors.")
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: {len(primals)} primals but {len(tangents)} tangents.")
    values = [_array(p) for p in primals]
    tans = [_array(t) for t in tangents]
    for i, (p, t) in enumerate(zip(values, tans)):
        if p.shape != t.shape:
            raise ValueError(f"jvp: tangent {i} has shape {t.shape}, primal {i} has shape "
                             f"{p.shape}.")
    sources = [Variable(p.astype(np.float32) if p.dtype.kind != "f" else p) for p in values]
    with _tape.GradientTape(persistent=True) as tape:
        for s in sources:
            tape.watch(s)
        result = run_user(fun, *[s.value for s in sources])
    outputs, aux = result if has_aux else (result, None)
    flat_out = nest.flatten(outputs)
    products = []
    for out in flat_out:
        shape = _array(out).shape
        jac = tape.jacobian(out, sources, unconnected_gradients="zero")
        total = np.zeros(shape, np.float64)
        for j, t in zip(jac, tans):
            j = _array(j).reshape(int(np.prod(shape)), -1)
            total += (j @ t.reshape(-1).astype(np.float64)).reshape(shape)
        products.append(Tensor(total.astype(_array(out).dtype)))
    tangent_out = nest.pack_like(outputs, products)
    primal_out = nest.pack_like(outputs, [Tensor(_array(o)) for o in flat_out])
    return (primal_out, tangent_out, aux) if has_aux else (primal_out, tangent_out)
