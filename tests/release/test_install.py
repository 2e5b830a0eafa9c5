"""The wheel installed into fresh virtual environments, once without extras and once with every
user-facing extra: the command, the public import paths and the generator work there, from the
installed files alone."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from releasekit import Env

pytestmark = pytest.mark.timeout(900)  # the first test in an environment pays for creating it

# Importable with the required dependencies alone.
CORE_MODULES = (
    "mcpbind.runtime",
    "mcpbind.runtime.app",
    "mcpbind.runtime.http",
    "mcpbind.runtime.http.auth",
    "mcpbind.runtime.http.auth.server",
    "mcpbind.runtime.http.cluster",
    "mcpbind.runtime.tasks",
    "mcpbind.generated",
    "mcpbind.codegen.cli",
)

# What each user-facing extra brings, as the import a user's code would make.
EXTRA_IMPORTS = {
    "codegen": ("datamodel_code_generator", "jinja2", "black"),
    "auth": ("authlib", "joserfc"),
    "redis": ("redis",),
    "otel": ("opentelemetry.trace",),
    "watch": ("watchfiles",),
}

# Prints where each module was loaded from, so a test can tell the environment's own copy from
# anything else on the path.
WHERE_FROM = """
import importlib, json, sys
print(json.dumps({m: importlib.import_module(m).__file__ for m in sys.argv[1:]}))
"""


def imported_from(env: Env, modules: tuple[str, ...] | list[str]) -> dict[str, str]:
    done = env.run(env.python, "-c", WHERE_FROM, *modules)
    assert done.returncode == 0, done.stderr
    files: dict[str, str] = json.loads(done.stdout)
    return files


def generated_modules(repo_root: Path) -> list[str]:
    return [f"mcpbind.generated.{p.name}" for p in sorted((repo_root / "generated").glob("v*_*_*"))]


def test_command_help(bare_env: Env) -> None:
    done = bare_env.run("mcpbind", "--help")
    assert done.returncode == 0, done.stderr
    for command in ("generate", "diff", "pin", "revisions"):
        assert command in done.stdout, f"`mcpbind --help` does not list {command}"


def test_command_version(bare_env: Env, project: dict[str, Any]) -> None:
    done = bare_env.run("mcpbind", "--version")
    assert done.returncode == 0, done.stderr
    assert project["version"] in done.stdout


@pytest.mark.parametrize("env_name", ["bare_env", "full_env"])
def test_public_modules_import_from_the_environment(
    request: pytest.FixtureRequest, env_name: str, repo_root: Path
) -> None:
    env: Env = request.getfixturevalue(env_name)
    modules = [*CORE_MODULES, *generated_modules(repo_root)]
    assert len(modules) > len(CORE_MODULES), "no generated revision packages in the checkout"
    files = imported_from(env, modules)
    for module, file in files.items():
        assert Path(file).is_relative_to(env.root), f"{module} was loaded from {file}"


def test_app_layer_runs_in_the_bare_environment(bare_env: Env) -> None:
    # A tool registered and listed through the public API: the runtime works, not only imports.
    script = (
        "from mcpbind.runtime.app import App\n"
        "app = App('release-check', '1.0')\n"
        "@app.tool()\n"
        "def add(a: int, b: int) -> int:\n"
        "    '''Add two numbers.'''\n"
        "    return a + b\n"
        "print('ok')\n"
    )
    done = bare_env.run(bare_env.python, "-c", script)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_extras_are_installed_only_where_asked(
    bare_env: Env, full_env: Env, user_extras: list[str]
) -> None:
    assert sorted(EXTRA_IMPORTS) == user_extras, "a new extra needs its imports listed here"
    wanted = [name for names in EXTRA_IMPORTS.values() for name in names]
    assert imported_from(full_env, wanted)
    for name in wanted:
        done = bare_env.run(bare_env.python, "-c", f"import {name}")
        assert done.returncode != 0, f"{name} is installed without its extra"


def test_cluster_state_in_the_full_environment(full_env: Env) -> None:
    done = full_env.run(
        full_env.python,
        "-c",
        "from mcpbind.runtime.http.cluster import RedisState; print(RedisState.__name__)",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "RedisState"


@pytest.mark.parametrize("env_name", ["bare_env", "full_env"])
def test_pip_check(request: pytest.FixtureRequest, env_name: str) -> None:
    env: Env = request.getfixturevalue(env_name)
    done = env.run(env.python, "-m", "pip", "check")
    assert done.returncode == 0, done.stdout + done.stderr


def test_diff_in_the_bare_environment(bare_env: Env, schema_env: dict[str, str | None]) -> None:
    done = bare_env.run("mcpbind", "diff", "2025-06-18", "2025-11-25", env=schema_env)
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("mcpbind diff 2025-06-18 -> 2025-11-25: "), first
    assert "changes" in first


def test_diff_json_in_the_full_environment(
    full_env: Env, schema_env: dict[str, str | None]
) -> None:
    done = full_env.run(
        "mcpbind",
        *("diff", "2025-06-18", "2025-11-25", "--format", "json", "--fail-on", "never"),
        env=schema_env,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["old"], report["new"]) == ("2025-06-18", "2025-11-25")
    assert report["entries"], "the diff of two different revisions found no change"


def test_generate_needs_its_extra(bare_env: Env, schema_env: dict[str, str | None]) -> None:
    out = bare_env.workdir / "no-extra"
    done = bare_env.run("mcpbind", "generate", "2025-06-18", "--out", out, env=schema_env)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr, done.stderr
    assert "mcpbind[codegen]" in done.stderr, done.stderr
    assert not out.exists() or not any(out.iterdir())


def test_generate_reproduces_the_checkout(
    full_env: Env, repo_root: Path, schema_env: dict[str, str | None]
) -> None:
    # The installed templates, pins and pinned formatters write the very files in generated/.
    out = full_env.workdir / "generated"
    done = full_env.run("mcpbind", "generate", "2025-06-18", "--out", out, env=schema_env)
    assert done.returncode == 0, done.stderr
    ours = repo_root / "generated" / "v2025_06_18"
    written = {p.name: p.read_bytes() for p in (out / "v2025_06_18").iterdir() if p.is_file()}
    expected = {p.name: p.read_bytes() for p in ours.iterdir() if p.is_file()}
    assert sorted(written) == sorted(expected)
    differ = sorted(name for name in expected if written[name] != expected[name])
    assert not differ, f"generated from the wheel, these differ from generated/: {differ}"


def test_environments_use_this_python(bare_env: Env) -> None:
    done = bare_env.run(bare_env.python, "-c", "import sys; print(sys.version_info[:2])")
    assert done.stdout.strip() == str(sys.version_info[:2])
