"""Mixed precision (`keras.mixed_precision`): the Keras 3 module's names for the dtype policy.

Every name is the same object as its main fkeras home: `DTypePolicy` (alias `Policy`) is
`fkeras.DTypePolicy`, `dtype_policy`/`global_policy` and `set_dtype_policy`/`set_global_policy`
are `fkeras.config.dtype_policy` and `fkeras.config.set_dtype_policy`, `LossScaleOptimizer` is
`fkeras.optimizers.LossScaleOptimizer`. fkeras runs the "float32" and "mixed_bfloat16"
policies; the others Keras knows ("mixed_float16", "float16", "bfloat16", "float64") are
refused with a ValueError that says why (see `fkeras.dtype_policies`).

Example:
```python
fkeras.mixed_precision.set_global_policy("mixed_bfloat16")
model = fkeras.Sequential([fkeras.Input((16,)), fkeras.layers.Dense(8)])
fkeras.mixed_precision.set_global_policy("float32")
```
"""

from fkeras.config import dtype_policy, set_dtype_policy
from fkeras.dtype_policies import DTypePolicy
from fkeras.optimizers import LossScaleOptimizer

Policy = DTypePolicy
global_policy = dtype_policy
set_global_policy = set_dtype_policy

__all__ = ["DTypePolicy", "LossScaleOptimizer", "Policy", "dtype_policy", "global_policy",
           "set_dtype_policy", "set_global_policy"]
