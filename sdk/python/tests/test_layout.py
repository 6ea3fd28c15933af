"""The walls of the package: only `capw.component` touches the generated bindings, so the
rest imports, and is tested, natively."""

from __future__ import annotations

import ast
import unittest
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "capw"
GENERATED = ("wit_world", "componentize_py_types", "componentize_py_runtime")


def imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


class LayoutTest(unittest.TestCase):
    def test_only_the_component_glue_imports_the_generated_bindings(self):
        for path in sorted(PACKAGE.rglob("*.py")):
            inside_glue = path.parent.name == "component"
            with self.subTest(str(path.relative_to(PACKAGE))):
                found = imported(path) & set(GENERATED)
                if not inside_glue:
                    self.assertEqual(found, set())

    def test_the_sdk_needs_nothing_beyond_the_standard_library(self):
        import sys

        allowed = set(sys.stdlib_module_names) | set(GENERATED) | {"capw"}
        for path in sorted(PACKAGE.rglob("*.py")):
            with self.subTest(str(path.relative_to(PACKAGE))):
                self.assertEqual(imported(path) - allowed, set())


if __name__ == "__main__":
    unittest.main()
