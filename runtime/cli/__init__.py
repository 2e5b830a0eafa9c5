"""The runtime's commands of the ``mcpbind`` command line: ``run``, ``dev``, ``inspect``,
``call``, ``read``, ``prompt`` and ``serve``, each a click command in a module of its own.

The one click group is ``mcpbind.codegen.cli.main``; it names these commands by import string
and imports a command's module only when that command runs (or ``--help`` lists it), so the
generator never imports the runtime. Every module here also runs alone:
``python -m mcpbind.runtime.cli.run examples/app_server.py`` is ``mcpbind run examples/app_server.py``.

The command line, on top of every layer. May import: every layer below it (it uses ``app`` and
down, never ``testing``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpbind.runtime._exports import install

if TYPE_CHECKING:
    from ._target import TargetError as TargetError, load_target as load_target

install(globals())
