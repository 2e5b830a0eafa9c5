"""The documentation site builds with ``mkdocs build --strict``, offline, and every page is in it.

Strict means any warning fails the build: a link to a missing page or anchor, a page left out of
the navigation, an API reference (``::: name``) that griffe cannot resolve. The negative tests
build a small site with the same configuration to show that each of those does fail.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest
import yaml
from docblocks import REPO_ROOT

#: The public modules the API reference documents (never a private one).
PUBLIC_MODULES = (
    "mcpbind.runtime",
    "mcpbind.runtime.app",
    "mcpbind.runtime.testing",
    "mcpbind.runtime.http",
    "mcpbind.runtime.auth",
    "mcpbind.runtime.auth.server",
    "mcpbind.runtime.cluster",
    "mcpbind.runtime.tasks",
    "mcpbind.runtime.skills",
    "mcpbind.runtime.telemetry",
    "mcpbind.generated.v2025_11_25",
)


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        cwd=config.parent,
        capture_output=True,
        text=True,
        timeout=240,
        # The checkout, as the tests run it (its mcpbind/ links), for the API reference too.
        env={
            "NO_MKDOCS_2_WARNING": "1",
            "PATH": str(Path(sys.executable).parent),
            "PYTHONPATH": str(REPO_ROOT),
        },
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = _build(REPO_ROOT / "mkdocs.yml", out)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def _nav_pages(nav: Any) -> list[str]:
    """The page files a ``nav`` entry names (a string, a list, or a titled mapping)."""
    if isinstance(nav, str):
        return [nav]
    items: list[Any] = []
    if isinstance(nav, list):
        items = list(cast(list[Any], nav))  # type: ignore[redundant-cast]  # pyright needs it
    elif isinstance(nav, dict):
        items = list(cast(dict[str, Any], nav).values())
    return [page for item in items for page in _nav_pages(item)]


def test_every_page_is_built_and_in_the_navigation(site: Path) -> None:
    config = yaml.safe_load((REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    pages = sorted(
        str(p.relative_to(REPO_ROOT / "docs")) for p in (REPO_ROOT / "docs").rglob("*.md")
    )
    assert sorted(_nav_pages(config["nav"])) == pages
    for page in pages:
        assert (site / page.replace(".md", ".html")).is_file(), page


def test_the_api_reference_documents_the_public_modules(site: Path) -> None:
    html = "".join(p.read_text(encoding="utf-8") for p in (site / "reference").glob("*.html"))
    for module in PUBLIC_MODULES:
        assert f'id="{module}"' in html, module
    for name in (
        "mcpbind.runtime.app.App.tool",
        "mcpbind.runtime.Client",
        "mcpbind.runtime.Server",
    ):
        assert f'id="{name}"' in html, name
    # Nothing private is documented: every documented name is public.
    assert 'id="mcpbind.runtime._' not in html
    assert 'id="mcpbind.runtime.http._' not in html


def test_the_project_files_are_included_as_they_are(site: Path) -> None:
    for source, page in [
        ("ARCHITECTURE.md", "architecture.html"),
        ("CHANGELOG.md", "changelog.html"),
        ("CONTRIBUTING.md", "contributing.html"),
        ("SECURITY.md", "security.html"),
        ("bench/README.md", "benchmarks.html"),
    ]:
        first = (REPO_ROOT / source).read_text(encoding="utf-8").splitlines()[0].lstrip("# ")
        assert first in (site / page).read_text(encoding="utf-8"), source


def test_the_site_needs_nothing_from_the_network(site: Path) -> None:
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "fonts.googleapis.com" not in text, page
        assert "fonts.gstatic.com" not in text, page


def _small_site(tmp_path: Path, page: str) -> Path:
    """Our configuration, with a docs folder of one page."""
    config = yaml.safe_load((REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text(page, encoding="utf-8")
    # The griffe extension the reference uses, where the configuration names it.
    shutil.copytree(REPO_ROOT / "docs" / "_ext", docs / "_ext")
    config["nav"] = [{"Home": "index.md"}]
    path = tmp_path / "mkdocs.yml"
    path.write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML too
    return path


@pytest.mark.parametrize(
    ("page", "complaint"),
    [
        ("# Home\n\nSee [the guide](missing.md).\n", "missing.md"),
        ("# Home\n\nSee [a part](#no-such-heading).\n", "no-such-heading"),
        ("# Home\n\n::: mcpbind.runtime.NoSuchThing\n", "NoSuchThing"),
    ],
    ids=["broken-link", "broken-anchor", "unresolved-reference"],
)
def test_a_broken_page_fails_the_build(tmp_path: Path, page: str, complaint: str) -> None:
    done = _build(_small_site(tmp_path, page), tmp_path / "site")
    assert done.returncode != 0
    assert complaint in done.stdout + done.stderr


def test_the_written_pages_link_nothing_site_absolute() -> None:
    """mkdocs only notes absolute links (the generated docstrings quote the specification's);
    the pages written here use relative ones, which the strict build checks."""
    pattern = re.compile(r"\]\(/|href=\"/")
    found = [
        str(page.relative_to(REPO_ROOT))
        for page in (REPO_ROOT / "docs").rglob("*.md")
        if pattern.search(page.read_text(encoding="utf-8"))
    ]
    assert not found
