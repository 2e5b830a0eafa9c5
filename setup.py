"""Map the top-level folders onto the ``mcpbind`` import package.

The repository keeps ``codegen/``, ``generated/``, ``runtime/`` and ``schema/`` at its root; the
installed distribution exposes them as ``mcpbind.codegen`` and so on. Subpackages are found here,
so that a newly generated revision needs no edit to the packaging metadata.

Install it as a regular package (``pip install '.[test]'``), not editable: an editable install of
this mapping is an import hook that mypy and pyright cannot follow, so they would not find
``mcpbind`` at all. ``mcpbind generate`` still writes into the checkout (``mcpbind.codegen.checkout``).

Contributors install once: the checkout's ``mcpbind/`` folder (links to the root folders, never
shipped: only the packages listed here are) lets the tests, mypy and pyright read the code as
edited from the repository root, ahead of the install (CONTRIBUTING.md).
"""

import shutil
from pathlib import Path

from setuptools import find_namespace_packages, setup
from setuptools.command.build_py import build_py

ROOTS = ("codegen", "generated", "runtime", "schema")


class fresh_build_py(build_py):
    """Build into an empty ``build/lib/mcpbind``: setuptools keeps what an earlier build left
    there, so a module deleted from the checkout would still be installed."""

    def run(self) -> None:
        shutil.rmtree(Path(self.build_lib) / "mcpbind", ignore_errors=True)
        super().run()


packages: list[str] = []
package_dir: dict[str, str] = {}
for root in ROOTS:
    packages.append(f"mcpbind.{root}")
    package_dir[f"mcpbind.{root}"] = root
    for sub in find_namespace_packages(where=root, exclude=["*__pycache__*"]):
        packages.append(f"mcpbind.{root}.{sub}")

setup(packages=packages, package_dir=package_dir, cmdclass={"build_py": fresh_build_py})
