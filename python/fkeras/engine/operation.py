"""keras.Operation and keras.Function: user-defined ops and callable graphs of ops.

fkeras's ops compute symbolically on KerasTensors themselves (recording a node in a Functional
graph), so an Operation's `call` serves both eager and symbolic inputs; `compute_output_spec`
is the symbolic path only when `call` cannot run on KerasTensors.
"""

import abc

from fkeras.engine.keras_tensor import KerasTensor
from fkeras.utils import nest


def _any_symbolic(args, kwargs):
    return any(isinstance(x, KerasTensor) for x in nest.flatten([list(args), kwargs]))


class Operation(abc.ABC):
    """The base class of ops (keras.Operation): subclass it and define `call` with fkeras.ops.

    Args:
        name: the operation's name (default: the snake-case class name).

    Example:
    ```python
    class Scale(fkeras.Operation):
        def call(self, x, factor=2.0):
            return fkeras.ops.multiply(x, factor)

    Scale()(np.ones(3))                         # eager
    Scale()(fkeras.Input((3,)))                 # symbolic, usable in a Functional model
    ```
    """

    def __init__(self, name=None):
        from fkeras.engine import naming

        self.name = name or naming.unique_name(naming.to_snake_case(type(self).__name__))

    def __call__(self, *args, **kwargs):
        if _any_symbolic(args, kwargs):
            return self.symbolic_call(*args, **kwargs)
        return self.call(*args, **kwargs)

    def symbolic_call(self, *args, **kwargs):
        """The result on KerasTensors: `call` run symbolically, else `compute_output_spec`."""
        if type(self).compute_output_spec is not Operation.compute_output_spec:
            try:
                return self.call(*args, **kwargs)
            except Exception:  # call needs concrete values: the declared spec instead
                return self.compute_output_spec(*args, **kwargs)
        return self.call(*args, **kwargs)

    @abc.abstractmethod
    def call(self, *args, **kwargs):
        """The operation on concrete values (subclasses implement it)."""

    def compute_output_spec(self, *args, **kwargs):
        """The output KerasTensor(s) for KerasTensor inputs (default: `call` run on them)."""
        return self.call(*args, **kwargs)

    def get_config(self):
        return {"name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<Operation name={self.name}>"


class Function:
    """A callable graph from symbolic `inputs` to `outputs` (keras.Function).

    `inputs` come from `fkeras.Input` (any nested structure); the ops and layers between them
    and `outputs` are replayed on concrete values by calling the Function.

    Args:
        inputs: a KerasTensor or a structure of them.
        outputs: KerasTensor(s) computed from `inputs`.
        name: optional name.

    Example:
    ```python
    x = fkeras.Input((3,))
    f = fkeras.Function(x, fkeras.ops.sum(fkeras.ops.square(x), axis=-1))
    f(np.ones((2, 3)))   # [3., 3.]
    ```
    """

    def __init__(self, inputs, outputs, name=None):
        from fkeras.models.functional import Functional

        for t in nest.flatten(inputs):
            if not isinstance(t, KerasTensor) or t._keras_history is None:
                raise ValueError("fkeras.Function needs inputs made by `fkeras.Input` "
                                 f"(KerasTensors with history). Received: {t!r}")
        self.name = name or "function"
        self._inputs, self._outputs = inputs, outputs
        self._graph = Functional(inputs, outputs, name=self.name)

    @property
    def inputs(self):
        return self._graph.inputs

    @property
    def outputs(self):
        return self._graph.outputs

    @property
    def operations(self):
        """The layers and op nodes of the graph, in the order they run."""
        return list(self._graph.layers)

    def __call__(self, inputs):
        return self._graph(inputs)

    def compute_output_spec(self, inputs):
        """The outputs' KerasTensors for KerasTensor `inputs` of the same structure."""
        return self._graph(inputs)
