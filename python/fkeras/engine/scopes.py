"""keras.name_scope, keras.remat and keras.RematScope, where fkeras imports them from
(engine/name_scope.py and engine/remat.py hold them)."""

from fkeras.engine.name_scope import current_path, name_scope  # noqa: F401
from fkeras.engine.remat import RematScope, remat  # noqa: F401
