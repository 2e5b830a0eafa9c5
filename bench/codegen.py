"""Benchmark of the generator and of the generated code's import time (issue 2). Not a test.

Run from the repository root; the schemas are the repository's own (``schema/<rev>/``), or
``$MCPBIND_SCHEMA_DIR``'s when set::

    .venv/bin/python bench/codegen.py --repeat 5 [--json figures.json] [--stages]

What it measures, each figure the median of ``--repeat`` runs, wall clock:

1. Generation. ``mcpbind generate --out TMP`` for every pinned revision, one fresh process per
   run, against ``datamodel-codegen`` alone on the same schema files, one process per schema,
   summed per run, in two variants:

   * ``dcg default``: ``--input-file-type jsonschema --output-model-type pydantic_v2.BaseModel``
     and its default formatters (black, isort). The headline overhead uses this one.
   * ``dcg mcpbind opts``: the options of ``mcpbind.codegen.emit.models.DCG_OPTIONS`` spelled on
     the command line. mcpbind passes ``formatters=[]`` (it runs black itself afterwards); the
     command line needs at least one formatter, so this variant uses ``--formatters builtin``.

   The overhead is ``(mcpbind - dcg) / dcg``; the aim is under 30 %. One untimed warm-up run of
   each command comes first, so every timed run finds its ``.pyc`` files written.

2. Import time. ``import mcpbind.generated.vYYYY_MM_DD`` for each revision (the package in the
   installed tree) and ``import mcp.types`` (the official SDK), each in a fresh interpreter that
   times the import itself with ``time.perf_counter()``, so interpreter start-up is excluded.
   One warm-up import of each module comes first, so both sides are measured with ``.pyc`` present.
   ``import pydantic`` alone is shown for reference: both sides pay for it. The aim is one
   revision importing faster than ``mcp.types``.

``--stages`` adds an in-process breakdown of one ``generate`` over all revisions (load, IR,
datamodel-code-generator, templates, black), to see which stage dominates.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from enum import Enum
from importlib import metadata
from pathlib import Path
from typing import Any

import _checkout  # noqa: F401  (the checkout ahead of an installed mcpbind)

REPO = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
GENERATE_AIM = 0.30
IMPORT_PROBE = (
    "import time\nt = time.perf_counter()\nimport {module}\nprint(repr(time.perf_counter() - t))\n"
)


# --- helpers -------------------------------------------------------------------------------------


def summary(samples: Sequence[float]) -> dict[str, Any]:
    """Median, min and max of ``samples`` (seconds), and the samples themselves."""
    return {
        "median": statistics.median(samples),
        "min": min(samples),
        "max": max(samples),
        "samples": list(samples),
    }


def child_env(schema_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["MCPBIND_SCHEMA_DIR"] = str(schema_dir)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # the warm-up must leave .pyc files behind
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    env["PYTHONWARNINGS"] = "ignore"  # datamodel-codegen's FutureWarning about formatters
    return env


def run(cmd: Sequence[str], env: dict[str, str], cwd: Path) -> str:
    """Run ``cmd``; its stdout, or SystemExit with its stderr when it fails."""
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"bench: command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr}")
    return proc.stdout


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def repeated(action: Callable[[], float], repeat: int) -> list[float]:
    """One untimed warm-up, then ``repeat`` timed runs."""
    action()
    return [action() for _ in range(repeat)]


def version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


# --- 1. generation ------------------------------------------------------------------------------


def pinned_revisions() -> list[str]:
    from mcpbind.codegen.pins import load_pins

    return list(load_pins())


def dcg_option_args() -> list[str]:
    """``DCG_OPTIONS`` as datamodel-codegen command-line flags (``formatters=[]`` -> builtin)."""
    from mcpbind.codegen.emit.models import DCG_OPTIONS

    args: list[str] = []
    for key, value in DCG_OPTIONS.items():
        flag = "--" + key.replace("_", "-")
        if key == "formatters":
            names = [getattr(v, "value", v) for v in value] or ["builtin"]
            args += [flag, *map(str, names)]
        elif isinstance(value, bool):
            args.append(flag if value else "--no-" + key.replace("_", "-"))
        elif isinstance(value, Enum):
            args += [flag, str(value.value)]
        elif isinstance(value, dict):
            args += [flag, json.dumps(value)]
        else:
            args += [flag, str(value)]
    return args


DCG_DEFAULT_ARGS = [
    "--input-file-type",
    "jsonschema",
    "--output-model-type",
    "pydantic_v2.BaseModel",
]


def bench_generate(
    schema_dir: Path, revisions: list[str], repeat: int, env: dict[str, str]
) -> dict[str, Any]:
    dcg = str(Path(PYTHON).with_name("datamodel-codegen"))
    mcpbind_cmd = [PYTHON, "-m", "mcpbind.codegen", "generate"]
    schemas = [schema_dir / rev / "schema.json" for rev in revisions]

    def mcpbind_once() -> float:
        with tempfile.TemporaryDirectory(prefix="mcpbind-bench-") as tmp:
            out = Path(tmp) / "generated"
            return timed(lambda: run([*mcpbind_cmd, "--out", str(out)], env, Path(tmp)))

    def dcg_once(extra: list[str]) -> float:
        total = 0.0
        with tempfile.TemporaryDirectory(prefix="dcg-bench-") as tmp:
            for i, schema in enumerate(schemas):
                cmd = [dcg, "--input", str(schema), *extra, "--output", f"{tmp}/m{i}.py"]
                total += timed(lambda cmd=cmd: run(cmd, env, Path(tmp)))
        return total

    results: dict[str, Any] = {"revisions": revisions}
    results["mcpbind"] = summary(repeated(mcpbind_once, repeat))
    results["dcg_default"] = summary(repeated(lambda: dcg_once(DCG_DEFAULT_ARGS), repeat))
    option_args = dcg_option_args()
    results["dcg_mcpbind_options"] = summary(repeated(lambda: dcg_once(option_args), repeat))
    results["dcg_mcpbind_options"]["args"] = option_args
    mcp = results["mcpbind"]["median"]
    for key in ("dcg_default", "dcg_mcpbind_options"):
        base = results[key]["median"]
        results[key]["overhead"] = (mcp - base) / base
    results["headline"] = "dcg_default"
    results["overhead"] = results["dcg_default"]["overhead"]
    results["aim"] = GENERATE_AIM
    results["met"] = results["overhead"] < GENERATE_AIM
    return results


# --- 2. import time -----------------------------------------------------------------------------


def bench_imports(revisions: list[str], repeat: int, env: dict[str, str]) -> dict[str, Any]:
    from mcpbind.codegen.pipeline import package_dir

    def import_once(module: str) -> float:
        with tempfile.TemporaryDirectory(prefix="import-bench-") as tmp:
            # cwd is an empty folder, so the repository root is not on sys.path
            out = run([PYTHON, "-c", IMPORT_PROBE.format(module=module)], env, Path(tmp))
        return float(out.strip().splitlines()[-1])

    def measure(module: str) -> dict[str, Any]:
        return {"module": module, **summary(repeated(lambda: import_once(module), repeat))}

    sdk = measure("mcp.types")
    results: dict[str, Any] = {
        "pyc": "one warm-up import per module first: every timed import finds its .pyc files",
        "mcp_types": sdk,
        "pydantic": measure("pydantic"),
        "revisions": {},
    }
    for rev in revisions:
        entry = measure(f"mcpbind.generated.{package_dir(rev)}")
        entry["ratio_to_mcp_types"] = entry["median"] / sdk["median"]
        entry["met"] = entry["median"] < sdk["median"]
        results["revisions"][rev] = entry
    return results


# --- optional: stage breakdown, in process ------------------------------------------------------


def bench_stages(schema_dir: Path, revisions: list[str], repeat: int) -> dict[str, Any]:
    """Seconds per pipeline stage for all ``revisions`` in one process (imports excluded)."""
    os.environ["MCPBIND_SCHEMA_DIR"] = str(schema_dir)
    from mcpbind.codegen.emit.models import emit_models
    from mcpbind.codegen.emit.render import render_revision_modules
    from mcpbind.codegen.format import format_python
    from mcpbind.codegen.ir import build_ir
    from mcpbind.codegen.load import load_revision

    stages = ("load", "ir", "datamodel-codegen", "templates", "black")

    def once() -> dict[str, float]:
        spent = dict.fromkeys(stages, 0.0)
        for rev in revisions:
            start = time.perf_counter()
            loaded = load_revision(rev)
            t1 = time.perf_counter()
            ir = build_ir(loaded)
            t2 = time.perf_counter()
            models = emit_models(ir)
            modules = {"types.pyi": models.stub, "types.py": models.runtime}
            t3 = time.perf_counter()
            modules.update(render_revision_modules(ir))
            t4 = time.perf_counter()
            for source in modules.values():
                format_python(source)
            t5 = time.perf_counter()
            marks = (start, t1, t2, t3, t4, t5)
            for i, stage in enumerate(stages):
                spent[stage] += marks[i + 1] - marks[i]
        return spent

    once()  # warm-up: imports, caches
    runs = [once() for _ in range(repeat)]
    return {stage: summary([r[stage] for r in runs]) for stage in stages}


# --- report -------------------------------------------------------------------------------------


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


def print_report(figures: dict[str, Any]) -> None:
    gen, imp = figures["generate"], figures["import"]
    n = figures["repeat"]
    print(f"mcpbind codegen benchmark: medians of {n} runs, {figures['machine']['cpus']} CPU(s)")
    print(
        f"  python {figures['machine']['python']}; "
        + ", ".join(f"{k} {v}" for k, v in figures["versions"].items())
    )
    print()
    print(f"1. generate, {len(gen['revisions'])} revisions ({', '.join(gen['revisions'])})")
    print(f"   {'command':<42}{'median':>10}{'min':>9}{'max':>9}  mcpbind vs")
    rows = [
        ("mcpbind generate (1 process)", gen["mcpbind"]),
        ("datamodel-codegen default (1 per schema)", gen["dcg_default"]),
        ("datamodel-codegen mcpbind opts (1 per s.)", gen["dcg_mcpbind_options"]),
    ]
    for label, s in rows:
        over = f"{s['overhead'] * 100:+7.1f} %" if "overhead" in s else ""
        print(f"   {label:<42}{s['median']:>9.2f}s{s['min']:>8.2f}s{s['max']:>8.2f}s  {over}")
    verdict = "met" if gen["met"] else "MISSED"
    print(
        f"   headline overhead (vs dcg default): {gen['overhead'] * 100:+.1f} % "
        f"(aim < {gen['aim'] * 100:.0f} %): {verdict}"
    )
    print()
    print("2. import time in a fresh interpreter, start-up excluded; .pyc present (warm-up first)")
    sdk = imp["mcp_types"]["median"]
    print(f"   {'import mcp.types (official SDK ' + figures['versions']['mcp'] + ')':<42}{ms(sdk)}")
    print(f"   {'import pydantic (paid by both)':<42}{ms(imp['pydantic']['median'])}")
    for entry in imp["revisions"].values():
        mark = "faster" if entry["met"] else "SLOWER"
        print(
            f"   {'import ' + entry['module']:<42}{ms(entry['median'])}"
            f"   x{entry['ratio_to_mcp_types']:.2f} of mcp.types: {mark}"
        )
    if "stages" in figures:
        print()
        print("3. in-process stage breakdown of generate (all revisions, imports excluded)")
        stages = figures["stages"]
        total = sum(s["median"] for s in stages.values())
        for stage, s in stages.items():
            share = s["median"] / total * 100
            print(f"   {stage:<42}{s['median']:>9.2f}s  {share:5.1f} %")
        print(f"   {'total':<42}{total:>9.2f}s")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per figure (default 5)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures here")
    parser.add_argument(
        "--schema-dir",
        type=Path,
        help="default: $MCPBIND_SCHEMA_DIR, else the repository's schema/",
    )
    parser.add_argument("--stages", action="store_true", help="add an in-process stage breakdown")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    schema_dir: Path = (
        args.schema_dir or Path(os.environ.get("MCPBIND_SCHEMA_DIR") or REPO / "schema")
    ).resolve()
    revisions = pinned_revisions()
    missing = [r for r in revisions if not (schema_dir / r / "schema.json").is_file()]
    if missing:
        parser.error(f"no schema.json under {schema_dir} for {', '.join(missing)}")

    env = child_env(schema_dir)
    figures: dict[str, Any] = {
        "repeat": args.repeat,
        "unit": "seconds",
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "versions": {
            dist: version(dist)
            for dist in ("mcpbind", "datamodel-code-generator", "black", "pydantic", "mcp")
        },
        "schema_dir": str(schema_dir),
    }
    figures["generate"] = bench_generate(schema_dir, revisions, args.repeat, env)
    figures["import"] = bench_imports(revisions, args.repeat, env)
    if args.stages:
        figures["stages"] = bench_stages(schema_dir, revisions, args.repeat)
    print_report(figures)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
        print(f"\nfigures written to {args.json}")


if __name__ == "__main__":
    main()
