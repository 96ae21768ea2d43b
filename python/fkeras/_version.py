"""The fkeras version: the single source (the build reads it, the extension bakes it in)."""

__version__ = "0.1.0"
