"""StackedRNNCells: several cells run as one, each feeding the next within a time step."""

from fkeras.layers.layer import Layer
from fkeras.layers.rnn import cell_calls
from fkeras.utils import nest


class StackedRNNCells(Layer):
    """Wraps a list of RNN cells so that `RNN` runs them as one cell (Keras 3).

    At each step cell k receives cell k-1's output; the states are the list of each cell's
    states (`state_size` is the list of the cells' state sizes); the output is the last cell's.

    Args:
        cells: a list of cells (built-in cells, user Layers, or objects with `call` and
            `state_size`).

    Example:
    ```python
    y = RNN(StackedRNNCells([LSTMCell(8), LSTMCell(4)]))(Input(shape=(10, 3)))   # (None, 4)
    ```
    """

    def __init__(self, cells, **kwargs):
        super().__init__(**kwargs)
        for cell in cells:
            if "call" not in dir(cell):
                raise ValueError("All cells must have a `call` method. Received cell without "
                                 f"a `call` method: {cell}")
            if "state_size" not in dir(cell):
                raise ValueError("All cells must have a `state_size` attribute. Received cell "
                                 f"without a `state_size`: {cell}")
        self.cells = list(cells)
        for cell in self.cells:
            if isinstance(cell, Layer) and cell not in self._layers:
                self._layers.append(cell)

    @property
    def state_size(self):
        return [c.state_size for c in self.cells]

    @property
    def output_size(self):
        return cell_calls.output_size(self.cells[-1])

    def get_initial_state(self, batch_size=None):
        return [cell_calls.initial_state(cell, batch_size) for cell in self.cells]

    def build(self, input_shape):
        for cell in self.cells:
            if isinstance(cell, Layer) and not cell.built:
                cell.build(tuple(input_shape))
                cell.built = True
            input_shape = (tuple(input_shape)[0], cell_calls.output_size(cell))
        self.built = True

    def call(self, inputs, states, training=False, **kwargs):
        new_states = []
        for cell, cell_states in zip(self.cells, states):
            was_list = nest.is_nested(cell_states)
            cell_states = list(cell_states) if was_list else [cell_states]
            inputs, cell_states = cell_calls.step(cell, inputs, cell_states, training)
            if len(cell_states) == 1 and not was_list:
                cell_states = cell_states[0]
            new_states.append(cell_states)
        if len(new_states) == 1:
            new_states = new_states[0]
        return inputs, new_states

    def reset_dropout_mask(self):
        for cell in self.cells:
            if hasattr(cell, "reset_dropout_mask"):
                cell.reset_dropout_mask()

    def reset_recurrent_dropout_mask(self):
        for cell in self.cells:
            if hasattr(cell, "reset_recurrent_dropout_mask"):
                cell.reset_recurrent_dropout_mask()

    def get_config(self):
        config = super().get_config()
        config["cells"] = [cell_calls.serialize_cell(cell) for cell in self.cells]
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        cells = [cell_calls.deserialize_cell(c, custom_objects) for c in config.pop("cells")]
        return cls(cells, **config)
