"""``python -m mcpbind.codegen`` runs the ``mcpbind`` command line."""

from .cli import main

main()
