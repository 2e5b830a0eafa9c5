"""The benches' one way to count instructions: a command under callgrind, and its total."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["command", "run", "total"]

TOTALS = re.compile(r"^(?:summary|totals): (\d+)", re.MULTILINE)


def command(argv: Sequence[str], out: Path) -> list[str]:
    """``argv`` under callgrind, its profile written to ``out``."""
    return ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv]


def total(out: Path) -> int:
    """The instructions of the finished run that wrote ``out``."""
    found = TOTALS.search(out.read_text(errors="replace"))
    if found is None:
        raise SystemExit(f"no totals in {out}")
    return int(found.group(1))


def run(
    argv: Sequence[str], out: Path, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> int:
    """Run ``argv`` to its end under callgrind; the instructions it ran."""
    done = subprocess.run(
        command(argv, out), env=env, cwd=cwd, capture_output=True, text=True, check=False
    )
    if done.returncode:
        raise SystemExit(f"{' '.join(argv)} failed under callgrind:\n{done.stderr[-2000:]}")
    return total(out)
