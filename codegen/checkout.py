"""Where the source checkout is, for a regular (non-editable) install made from one.

The repository is installed as a regular package so that type checkers can read it (an
editable install of its folder mapping is an import hook they cannot follow). Two things still
need the checkout itself: ``mcpbind generate`` writes into its ``generated/``, and the tests
must run the checkout's code, so they refuse an install that differs from it
(:func:`stale_files`). pip records the folder an install came from (PEP 610,
``direct_url.json``); that is how an installed copy finds its checkout.
"""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

from .jsonvalues import is_object

__all__ = ["ROOTS", "default_out", "installed_root", "source_checkout", "stale_files"]

ROOTS = ("codegen", "generated", "runtime", "schema")
# What the distribution ships of each root: modules and package data (see pyproject.toml).
_SHIPPED = {".py", ".pyi", ".jinja", ".toml", ".typed"}


def installed_root() -> Path:
    """The folder that holds ``codegen/``, ``runtime/``...: the checkout when run from it."""
    return Path(__file__).resolve().parent.parent


def _is_checkout(path: Path) -> bool:
    return (path / "setup.py").is_file() and all((path / root).is_dir() for root in ROOTS)


def source_checkout() -> Path | None:
    """The checkout this code runs from or was installed from, if it is still there."""
    here = installed_root()
    if _is_checkout(here):
        return here
    # The record next to this copy: from the checkout, ``mcpbind.egg-info`` (a build's leftover,
    # on ``sys.path`` as the current folder) would be found first by name alone.
    found = metadata.distributions(name="mcpbind", path=[str(here.parent)])
    text = next((dist.read_text("direct_url.json") for dist in found), None)
    try:
        record = json.loads(text or "null")
    except ValueError:
        return None
    if not is_object(record) or "dir_info" not in record:
        return None
    url = urlparse(str(record.get("url", "")))
    if url.scheme != "file":
        return None
    path = Path(unquote(url.path))
    return path if _is_checkout(path) else None


def default_out() -> Path | None:
    """Where ``mcpbind generate`` writes by default: the checkout's ``generated/``. None outside
    a checkout, where ``--out`` is required: an installed package is never rewritten."""
    checkout = source_checkout()
    return checkout / "generated" if checkout else None


def _shipped(root: Path) -> dict[str, Path]:
    return {
        path.relative_to(root).as_posix(): path
        for path in root.rglob("*")
        if path.suffix in _SHIPPED and "__pycache__" not in path.parts and path.is_file()
    }


def stale_files(checkout: Path) -> list[str]:
    """Files (``runtime/_client.py``) in which the running install differs from ``checkout``:
    changed, missing or left over. Empty when it runs from the checkout itself."""
    here = installed_root()
    if here == checkout.resolve():
        return []
    stale: list[str] = []
    for root in ROOTS:
        ours, theirs = _shipped(here / root), _shipped(checkout / root)
        for name in sorted(ours.keys() | theirs.keys()):
            mine, source = ours.get(name), theirs.get(name)
            if mine is None or source is None or mine.read_bytes() != source.read_bytes():
                stale.append(f"{root}/{name}")
    return stale
