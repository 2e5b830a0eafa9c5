"""The contributor loop: edit the checkout, run, no reinstall in between (CONTRIBUTING.md).

Each test works on a copy of the checkout in a temporary folder, so nothing here edits the
repository: it adds a module, changes a function, deletes a module the regular install still has,
then runs pytest, ``python -c``, the ``mcpbind`` script, mypy and pyright there, as a contributor's
shell would (without the ``PYTHONPATH`` this suite's conftest exports). Last, the links checked
out as plain files, as git does on Windows without symlinks: the tests run the regular install.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from mcpbind.codegen.checkout import ROOTS

PROBE = "def answer() -> int:\n    return 42\n"
RUNTIME_ADDITION = "\n\ndef devloop_answer() -> int:\n    return 24\n"
# Edits change the file's size: Python reuses cached bytecode when a source keeps its size and
# modification second, which a test (unlike a person) can manage.
PROBE_EDITED = "def answer() -> int:\n    return 4200\n"
HELP_LINE = "Typed Python bindings for the Model Context Protocol"

CHECKOUT_TEST = f"""\
import subprocess
import sys
from pathlib import Path

from mcpbind.runtime import devloop_answer
from mcpbind.runtime.devloop_probe import answer


def run(*command: str) -> subprocess.CompletedProcess[str]:
    # From another folder, so only PYTHONPATH (from conftest) can lead to the checkout.
    return subprocess.run(command, capture_output=True, text=True, cwd=Path.home(), check=False)


def test_in_process() -> None:
    assert answer() == 42 and devloop_answer() == 24


def test_in_a_child_process() -> None:
    child = run(sys.executable, "-c", "from mcpbind.runtime.devloop_probe import answer; print(answer())")
    assert child.stdout == "42\\n", child.stderr


def test_the_console_script() -> None:
    helped = run(str(Path(sys.executable).with_name("mcpbind")), "--help")
    assert "Edited in the checkout" in helped.stdout and {HELP_LINE!r} not in helped.stdout


def test_a_deleted_module_is_gone() -> None:
    gone = run(sys.executable, "-m", "mcpbind.codegen", "--help")
    assert gone.returncode != 0 and "No module named mcpbind.codegen.__main__" in gone.stderr
"""

INSTALL_TEST = """\
import os
from pathlib import Path

import mcpbind.runtime


def test_the_install_runs() -> None:
    here = Path(mcpbind.runtime.__file__).resolve().parent
    assert here == Path(os.environ["EXPECTED_RUNTIME"]).resolve(), here
"""

USES_PROBE = """\
from mcpbind.runtime import devloop_answer
from mcpbind.runtime.devloop_probe import answer

wrong: str = answer()
also_wrong: str = devloop_answer()
"""


def shell_env(**extra: str) -> dict[str, str]:
    """This process's environment as a contributor's shell has it: no PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(extra)
    return env


def run(cwd: Path, *command: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        cwd=cwd,
        env=shell_env(**extra),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def copy_checkout(source: dict[str, Path], repo_root: Path, target: Path) -> Path:
    """A checkout at ``target``: the root folders from ``source``, the rest from the repository."""
    skip = shutil.ignore_patterns("__pycache__")
    for root in ROOTS:
        shutil.copytree(source[root], target / root, ignore=skip)
    shutil.copytree(repo_root / "mcpbind", target / "mcpbind", symlinks=True, ignore=skip)
    for name in ("setup.py", "pyproject.toml", "tests/conftest.py"):
        (target / name).parent.mkdir(exist_ok=True)
        shutil.copy(repo_root / name, target / name)
    return target


@pytest.fixture
def edited(tmp_path: Path, repo_root: Path) -> Path:
    """A copy of the checkout, edited in ways the regular install has not seen."""
    copy = copy_checkout({r: repo_root / r for r in ROOTS}, repo_root, tmp_path / "checkout")
    (copy / "runtime" / "devloop_probe.py").write_text(PROBE)
    with (copy / "runtime" / "__init__.py").open("a") as runtime:
        runtime.write(RUNTIME_ADDITION)
    cli = copy / "codegen" / "cli" / "__init__.py"
    assert HELP_LINE in cli.read_text()
    cli.write_text(cli.read_text().replace(HELP_LINE, "Edited in the checkout"))
    (copy / "codegen" / "__main__.py").unlink()
    return copy


def test_the_tests_and_what_they_start_run_the_edited_checkout(edited: Path) -> None:
    (edited / "tests" / "test_edited.py").write_text(CHECKOUT_TEST)
    done = run(edited, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 passed" in done.stdout, done.stdout


def test_a_second_edit_is_seen_at_once(edited: Path) -> None:
    code = "from mcpbind.runtime.devloop_probe import answer; print(answer())"
    assert run(edited, sys.executable, "-c", code).stdout == "42\n"
    (edited / "runtime" / "devloop_probe.py").write_text(PROBE_EDITED)
    assert run(edited, sys.executable, "-c", code).stdout == "4200\n"
    # From elsewhere, PYTHONPATH leads to the checkout (what conftest exports for child processes).
    elsewhere = run(Path.home(), sys.executable, "-c", code, PYTHONPATH=str(edited))
    assert elsewhere.stdout == "4200\n", elsewhere.stderr


def test_mypy_checks_the_edited_checkout(edited: Path) -> None:
    (edited / "uses_probe.py").write_text(USES_PROBE)
    # The edited and the new module read, their imports not followed (fast); mypy would take
    # the installed mcpbind.runtime, which has no devloop_answer, if it did not see the checkout.
    modules = ("uses_probe", "mcpbind.runtime", "mcpbind.runtime.devloop_probe")
    done = run(
        edited,
        sys.executable,
        "-m",
        "mypy",
        "--follow-imports=skip",
        *(arg for module in modules for arg in ("-m", module)),
    )
    assert done.returncode == 1, done.stdout + done.stderr
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert [line.split(": error: ")[0] for line in errors] == [
        "uses_probe.py:4",
        "uses_probe.py:5",
    ], done.stdout
    assert all("Incompatible types in assignment" in line for line in errors), done.stdout


def test_pyright_checks_the_edited_checkout(edited: Path) -> None:
    (edited / "uses_probe.py").write_text(USES_PROBE)
    done = run(
        edited,
        sys.executable,
        "-m",
        "pyright",
        "--pythonpath",
        sys.executable,
        "--outputjson",
        "uses_probe.py",
    )
    report = json.loads(done.stdout)
    errors = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    assert [(d["range"]["start"]["line"] + 1, d.get("rule")) for d in errors] == [
        (4, "reportAssignmentType"),
        (5, "reportAssignmentType"),
    ], json.dumps(errors, indent=1)


def test_links_checked_out_as_files_run_the_regular_install(
    tmp_path: Path, repo_root: Path
) -> None:
    installed = Path(sysconfig.get_paths()["purelib"]) / "mcpbind"
    assert (installed / "runtime" / "__init__.py").is_file(), "the README's regular install"
    # A checkout that matches the install, with the links as git writes them without symlinks.
    copy = copy_checkout({r: installed / r for r in ROOTS}, repo_root, tmp_path / "windows")
    for root in ROOTS:
        (copy / "mcpbind" / root).unlink()
        (copy / "mcpbind" / root).write_text(f"../{root}")
    (copy / "tests" / "test_install.py").write_text(INSTALL_TEST)
    command = (sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests")
    done = run(copy, *command, EXPECTED_RUNTIME=str(installed / "runtime"))
    assert done.returncode == 0, done.stdout + done.stderr
    # An edit there cannot run without a reinstall: refused in one line, naming the cause.
    (copy / "runtime" / "devloop_probe.py").write_text(PROBE)
    refused = run(copy, *command)
    assert refused.returncode == pytest.ExitCode.USAGE_ERROR, refused.stdout + refused.stderr
    assert "Traceback" not in refused.stderr
    [line] = refused.stderr.strip().splitlines()
    assert "runtime/devloop_probe.py" in line and "git core.symlinks is off" in line, line
