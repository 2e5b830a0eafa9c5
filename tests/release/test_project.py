"""The release metadata agrees with itself and with CI: the classifiers name exactly the Pythons
the workflows and ``.ci/run`` test, the changelog's newest entry is the package version, and the
workflows pass actionlint (with shellcheck on their scripts)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from releasekit import clean_env

WORKFLOWS = Path(".github") / "workflows"

# A workflow actionlint must reject: a job without runs-on, an unknown matrix key and a shell
# script with an unquoted expansion shellcheck warns about.
BROKEN_WORKFLOW = """\
name: broken
on: push
jobs:
  test:
    strategy:
      matrix:
        python: ["3.11"]
    steps:
      - run: echo ${{ matrix.pyhton }}
      - run: ls $HOME/*.txt | wc -l
"""


def classifier_pythons(project: dict[str, Any]) -> set[str]:
    prefix = "Programming Language :: Python :: "
    found = {c.removeprefix(prefix) for c in project["classifiers"] if c.startswith(prefix)}
    return {v for v in found if re.fullmatch(r"3\.\d+", v)}


def workflow_pythons(repo_root: Path) -> set[str]:
    """Every Python version a workflow job installs: `python-version` values and the matrix
    lists they are taken from."""
    found: set[str] = set()
    for path in sorted((repo_root / WORKFLOWS).glob("*.yml")):
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
        for job in document.get("jobs", {}).values():
            matrix = job.get("strategy", {}).get("matrix", {})
            for step in job.get("steps", []):
                version = str(step.get("with", {}).get("python-version", ""))
                expression = re.fullmatch(r"\$\{\{\s*matrix\.(\w+)\s*\}\}", version)
                if expression:
                    found.update(str(v) for v in matrix.get(expression.group(1), []))
                elif version:
                    found.add(version)
    return found


def ci_run_pythons(repo_root: Path) -> set[str]:
    text = (repo_root / ".ci" / "run").read_text(encoding="utf-8")
    full = re.search(r"^FULL_PYTHON=(\S+)$", text, re.M)
    extra = re.search(r'^EXTRA_PYTHONS="([^"]*)"$', text, re.M)
    assert full and extra, ".ci/run no longer declares FULL_PYTHON= and EXTRA_PYTHONS="
    return {full.group(1), *extra.group(1).split()}


def test_classifiers_name_exactly_the_pythons_ci_runs(
    project: dict[str, Any], repo_root: Path
) -> None:
    pythons = classifier_pythons(project)
    assert pythons == {"3.11", "3.12", "3.13"}, pythons
    assert workflow_pythons(repo_root) == pythons
    assert ci_run_pythons(repo_root) == pythons


def test_requires_python_is_the_oldest_classifier(project: dict[str, Any]) -> None:
    oldest = min(classifier_pythons(project), key=lambda v: tuple(map(int, v.split("."))))
    assert project["requires-python"] == f">={oldest}"


def test_changelog_leads_with_this_version(project: dict[str, Any], repo_root: Path) -> None:
    text = (repo_root / "CHANGELOG.md").read_text(encoding="utf-8")
    first = re.search(r"^## \[([^\]]+)\] - (.+)$", text, re.M)
    assert first, "CHANGELOG.md has no '## [version] - date' entry"
    assert first.group(1) == project["version"]
    assert re.fullmatch(r"Unreleased|\d{4}-\d{2}-\d{2}", first.group(2)), first.group(2)


def test_every_direct_dependency_has_a_floor(project: dict[str, Any]) -> None:
    requirements = [*project["dependencies"]]
    for name, extra in project["optional-dependencies"].items():
        requirements += [r for r in extra if not r.startswith("mcpbind[")]
        assert extra, f"extra {name} is empty"
    unbounded = [r for r in requirements if not re.search(r"(>=|==)\s*\d", r.split(";")[0])]
    assert not unbounded, f"no lower bound: {unbounded}"


def actionlint() -> str:
    """actionlint from this environment (the test extra's wheel), else from PATH."""
    here = Path(sys.executable).parent
    found = shutil.which("actionlint", path=str(here)) or shutil.which("actionlint")
    assert found, "actionlint is not installed: pip install '.[test]'"
    return found


def run_actionlint(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # This environment's scripts first on PATH, so actionlint finds shellcheck beside it.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return subprocess.run(
        [actionlint(), "-no-color", *args],
        cwd=cwd,
        env=clean_env({"PATH": path}),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_workflows_pass_actionlint(repo_root: Path) -> None:
    workflows = [
        p.relative_to(repo_root).as_posix() for p in sorted((repo_root / WORKFLOWS).glob("*.yml"))
    ]
    assert workflows, "no workflows"
    done = run_actionlint(*workflows, cwd=repo_root)
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_rejects_a_broken_workflow(tmp_path: Path) -> None:
    (tmp_path / WORKFLOWS).mkdir(parents=True)
    (tmp_path / WORKFLOWS / "broken.yml").write_text(BROKEN_WORKFLOW, encoding="utf-8")
    done = run_actionlint((WORKFLOWS / "broken.yml").as_posix(), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert '"runs-on" section is missing' in done.stdout, done.stdout
    assert "pyhton" in done.stdout, done.stdout
    if shutil.which("shellcheck", path=str(Path(sys.executable).parent)):
        assert "shellcheck reported issue" in done.stdout, done.stdout


def test_ci_run_passes_shellcheck(repo_root: Path) -> None:
    """``.ci/run`` is a script CI runs as it is: shellcheck finds nothing in it (the test extra's
    wheel brings shellcheck beside this interpreter)."""
    found = shutil.which("shellcheck", path=str(Path(sys.executable).parent))
    assert found, "shellcheck is not installed: pip install '.[test]'"
    done = subprocess.run(
        [found, "--format=gcc", ".ci/run"],
        cwd=repo_root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
