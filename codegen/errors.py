"""The one exception type the generator raises for bad input.

The CLI turns it into a single line on stderr and a non-zero exit; anything else escaping the
pipeline is a bug in mcpbind, not in the user's input.
"""


class CodegenError(Exception):
    """Bad input to the generator: unknown revision, unreadable or invalid schema, hash mismatch."""
