"""The checkout as the installed ``mcpbind``, for contributors (see CONTRIBUTING.md); not shipped.

The links beside this file (``runtime -> ../runtime``...) give the root folders their installed
names, so with the repository root first on the path the code runs, and mypy and pyright check it,
as edited: no reinstall. This file makes the folder a regular package, which mypy requires of a
package it finds on ``mypy_path`` (it would take the installed copy instead); ``extend_path``
keeps the installed copy's folder as a fallback for links that git checked out as plain files.
"""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)
