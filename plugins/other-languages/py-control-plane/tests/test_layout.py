"""The provider's own code never imports the bindings componentize-py generates: it speaks
only the SDK (`capw`), which is what lets every test here run natively."""

from __future__ import annotations

import ast
import unittest
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "py_control_plane"


class LayoutTest(unittest.TestCase):
    def test_the_provider_imports_no_generated_module(self):
        for path in sorted(PACKAGE.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                modules = []
                if isinstance(node, ast.Import):
                    modules = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    modules = [node.module]
                for module in modules:
                    with self.subTest(f"{path.name}: {module}"):
                        self.assertFalse(
                            module.startswith(("wit_world", "componentize_py")), module
                        )
                        self.assertFalse(module.startswith("capw.component"), "only app.py exports")


if __name__ == "__main__":
    unittest.main()
