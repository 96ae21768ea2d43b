"""keras.ops.nn / .linalg / .numpy: every grouped name resolves to the one fkeras.ops function,
and the groupings equal Keras 3's (where installed)."""

import pytest

from fkeras import ops
from fkeras.ops import groupings


@pytest.mark.parametrize("module,names", [(ops.nn, groupings.NN), (ops.linalg, groupings.LINALG),
                                          (ops.numpy, groupings.NUMPY)])
def test_every_grouped_name_is_the_top_level_op(module, names):
    for name in names:
        assert getattr(module, name) is getattr(ops, name), name
    with pytest.raises(AttributeError, match="no attribute 'not_an_op'"):
        module.not_an_op


@pytest.mark.parametrize("group,names", [("nn", groupings.NN), ("linalg", groupings.LINALG),
                                         ("numpy", groupings.NUMPY)])
def test_groupings_equal_keras(group, names):
    keras = pytest.importorskip("keras")
    public = {n for n in dir(getattr(keras.ops, group)) if not n.startswith("_")}
    assert public == set(names)
