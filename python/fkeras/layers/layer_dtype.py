"""The dtype-policy part of `Layer` (Keras 3: `dtype_policy`; `dtype` is the variable dtype;
`compute_dtype`). A "mixed_bfloat16" layer runs its products in bfloat16 (`_fk_bf16`: the
base Layer opens `devices.bf16_products` around its call; see dtype_policies.py)."""

from fkeras.engine.dtypes import POLICIES, standardize_dtype


class DTypePolicyMixin:
    _fk_bf16 = False  # the "mixed_bfloat16" policy: products in bfloat16 (dtype_policies.py)
    _fk_policy = None  # the DTypePolicy when it is a mixed one, else None

    def _fk_set_dtype_policy(self, dtype):
        from fkeras import config, dtype_policies

        if dtype is None:
            dtype = config.dtype_policy()
        name = standardize_dtype(dtype, allow_policy=True)
        if isinstance(dtype, dtype_policies.DTypePolicy) or name in POLICIES:
            policy = dtype_policies.get(dtype if not isinstance(dtype, dict) else name)
            name = policy.variable_dtype
            if policy.name != name:
                self._fk_policy = policy
                self._fk_bf16 = dtype_policies.computes_in_bfloat16(policy)
        self.dtype = name

    @property
    def dtype_policy(self):
        """The layer's DTypePolicy (Keras 3)."""
        from fkeras.dtype_policies import DTypePolicy

        return self._fk_policy if self._fk_policy is not None else DTypePolicy(self.dtype)

    @property
    def compute_dtype(self):
        """The dtype the layer computes in: "bfloat16" under "mixed_bfloat16" (its products;
        its outputs are float32 tensors), else its dtype."""
        return self._fk_policy.compute_dtype if self._fk_policy is not None else self.dtype

    @property
    def variable_dtype(self):
        """The dtype of the layer's variables."""
        return self.dtype
