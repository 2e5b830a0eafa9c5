"""Map the top-level folders onto the ``mcpbind`` import package.

The repository keeps ``codegen/``, ``generated/``, ``runtime/`` and ``schema/`` at its root; the
installed distribution exposes them as ``mcpbind.codegen`` and so on. Subpackages are found here,
so that a newly generated revision needs no edit to the packaging metadata.
"""

from setuptools import find_namespace_packages, setup

ROOTS = ("codegen", "generated", "runtime", "schema")

packages: list[str] = []
package_dir: dict[str, str] = {}
for root in ROOTS:
    packages.append(f"mcpbind.{root}")
    package_dir[f"mcpbind.{root}"] = root
    for sub in find_namespace_packages(where=root, exclude=["*__pycache__*"]):
        packages.append(f"mcpbind.{root}.{sub}")

setup(packages=packages, package_dir=package_dir)
