"""Runnable examples of the mcpbind runtime: ``python -m examples.server`` and ``python -m examples.client``."""
