"""Runnable examples shipped with fkeras: `python -m fkeras.examples.digits`."""
