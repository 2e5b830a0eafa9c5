"""What the sdist and the wheel hold: every package file of the checkout, the generated packages of
every pinned revision, the codegen templates, ``py.typed`` in each package, the pinned schemas,
metadata equal to ``pyproject.toml``, and nothing that is not part of the package."""

from __future__ import annotations

import hashlib
import re
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from releasekit import Dist, vendored_schemas

pytestmark = pytest.mark.timeout(900)  # the first test pays for `python -m build`

# The repository's folders and the subpackages of `mcpbind` they become (setup.py).
ROOTS = ("codegen", "generated", "runtime", "schema")
# Files of a root that belong in the package: code, templates, data and typing markers.
PACKAGE_SUFFIXES = frozenset({".py", ".jinja", ".toml", ".json", ".typed"})


def package_files(repo_root: Path) -> dict[str, Path]:
    """``mcpbind/<root>/...`` name -> checkout file, for every package file under the roots."""
    found: dict[str, Path] = {}
    for root in ROOTS:
        for path in sorted((repo_root / root).rglob("*")):
            if (
                path.is_file()
                and path.suffix in PACKAGE_SUFFIXES
                and "__pycache__" not in path.parts
            ):
                found[f"mcpbind/{path.relative_to(repo_root).as_posix()}"] = path
    return found


def pinned_revisions(repo_root: Path) -> list[str]:
    with (repo_root / "schema" / "pins.toml").open("rb") as f:
        return sorted(tomllib.load(f)["revisions"])


def module_name(revision: str) -> str:
    return "v" + revision.replace("-", "_")


def test_wheel_holds_every_package_file(dist: Dist, repo_root: Path) -> None:
    expected = package_files(repo_root)
    assert len(expected) > 100, "the checkout's package files were not found"
    missing = sorted(set(expected) - dist.wheel_names)
    assert not missing, f"{len(missing)} package files are not in the wheel: {missing[:10]}"
    with zipfile.ZipFile(dist.wheel) as whl:
        differ = [n for n, p in expected.items() if whl.read(n) != p.read_bytes()]
    assert not differ, f"wheel files differ from the checkout: {differ[:10]}"


def test_wheel_holds_a_generated_package_per_pinned_revision(dist: Dist, repo_root: Path) -> None:
    revisions = pinned_revisions(repo_root)
    assert revisions, "schema/pins.toml pins no revision"
    for revision in revisions:
        package = f"mcpbind/generated/{module_name(revision)}"
        modules = ("__init__.py", "types.py", "types.pyi", "methods.py", "client.py", "server.py")
        for module in modules:
            assert f"{package}/{module}" in dist.wheel_names, f"{package}/{module} not in the wheel"


def test_wheel_holds_the_codegen_templates(dist: Dist, repo_root: Path) -> None:
    templates = {p.name for p in (repo_root / "codegen" / "templates").glob("*.jinja")}
    assert templates, "no templates in codegen/templates"
    shipped = {
        n.rsplit("/", 1)[1]
        for n in dist.wheel_names
        if n.startswith("mcpbind/codegen/templates/") and n.endswith(".jinja")
    }
    assert shipped == templates


@pytest.mark.parametrize("root", ROOTS)
def test_every_package_is_typed(dist: Dist, root: str) -> None:
    assert f"mcpbind/{root}/py.typed" in dist.wheel_names, (
        f"mcpbind.{root} lacks py.typed (PEP 561)"
    )


def test_wheel_holds_the_pins_and_vendored_schemas(dist: Dist, repo_root: Path) -> None:
    assert "mcpbind/schema/pins.toml" in dist.wheel_names
    vendored = vendored_schemas(repo_root)
    with zipfile.ZipFile(dist.wheel) as whl:
        for path in vendored:
            name = f"mcpbind/{path.relative_to(repo_root).as_posix()}"
            assert name in dist.wheel_names, f"the vendored {name} is not in the wheel"
            assert whl.read(name) == path.read_bytes()
    if vendored:
        # Vendored means every pinned revision, with the bytes its pin names.
        with (repo_root / "schema" / "pins.toml").open("rb") as f:
            pins: dict[str, Any] = tomllib.load(f)["revisions"]
        for revision, pin in pins.items():
            path = repo_root / "schema" / revision / "schema.json"
            assert path in vendored, f"schema/{revision}/schema.json is not vendored"
            assert hashlib.sha256(path.read_bytes()).hexdigest() == pin["sha256"]


def test_wheel_holds_nothing_else(dist: Dist) -> None:
    tops = {n.split("/", 1)[0] for n in dist.wheel_names}
    info = [t for t in tops if t.endswith(".dist-info")]
    assert tops - set(info) == {"mcpbind"}, f"unexpected top-level entries: {sorted(tops)}"
    stray = [n for n in dist.wheel_names if "__pycache__" in n or n.endswith(".pyc")]
    assert not stray, stray[:5]
    # No mcpbind/__init__.py: mcpbind is a namespace of the four packages.
    subpackages = {n.split("/")[1] for n in dist.wheel_names if n.startswith("mcpbind/")}
    assert subpackages == set(ROOTS)


def test_sdist_holds_the_sources(dist: Dist, repo_root: Path) -> None:
    (prefix,) = {n.split("/", 1)[0] for n in dist.sdist_names}
    inside = {n.split("/", 1)[1] for n in dist.sdist_names}
    for needed in ("pyproject.toml", "setup.py", "README.md", "PKG-INFO"):
        assert needed in inside, f"{needed} not in the sdist"
    missing = sorted(
        n for n in (f.removeprefix("mcpbind/") for f in package_files(repo_root)) if n not in inside
    )
    assert not missing, f"not in the sdist {prefix}: {missing[:10]}"


def test_metadata_matches_pyproject(dist: Dist, project: dict[str, Any]) -> None:
    meta = dist.metadata
    assert meta["Name"] == ["mcpbind"]
    assert meta["Version"] == [project["version"]]
    assert meta["Requires-Python"] == [project["requires-python"]]
    assert sorted(meta["Classifier"]) == sorted(project["classifiers"])
    assert set(meta["Provides-Extra"]) == set(project["optional-dependencies"])
    # Requires-Dist: the dependencies, then each extra's with `; extra == "<name>"` appended.
    required = sorted(_normalise(r) for r in meta["Requires-Dist"] if "extra ==" not in r)
    assert required == sorted(_normalise(d) for d in project["dependencies"])
    urls = {u.split(",", 1)[0] for u in meta["Project-URL"]}
    assert urls == set(project["urls"])


def test_wheel_declares_the_command(dist: Dist) -> None:
    with zipfile.ZipFile(dist.wheel) as whl:
        name = next(n for n in dist.wheel_names if n.endswith(".dist-info/entry_points.txt"))
        entry_points = whl.read(name).decode("utf-8")
    assert re.search(r"^mcpbind = mcpbind\.codegen\.cli:main$", entry_points, re.M), entry_points


def _normalise(requirement: str) -> str:
    """A requirement in one spelling (specifiers sorted, markers double-quoted), as in METADATA."""
    return str(Requirement(requirement))
