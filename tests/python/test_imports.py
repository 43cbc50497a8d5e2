"""sia.torch's modules import one another without a cycle (function-level
imports included), and each imports alone in a fresh interpreter."""

import ast
import os
import subprocess
import unittest

from helpers import PYTHON, REPO, base_env

NEEDS_TORCH = True
PACKAGE = os.path.join(REPO, "python", "sia", "torch")


def modules():
    return sorted(f[:-3] for f in os.listdir(PACKAGE)
                  if f.endswith(".py") and f != "__init__.py")


def imported(name):
    """The sia.torch modules ``name`` imports, anywhere in its file."""
    with open(os.path.join(PACKAGE, name + ".py")) as f:
        tree = ast.parse(f.read())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "sia.torch":
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "sia.torch."):
            out.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            out |= {a.name.split(".")[2] for a in node.names
                    if a.name.startswith("sia.torch.")}
    return out & set(modules())


class Imports(unittest.TestCase):
    def test_no_cycle(self):
        graph = {m: imported(m) for m in modules()}
        self.assertIn("diagnostics", graph["state"])
        self.assertIn("state", graph["runtime"])
        done, path = set(), []

        def visit(m):
            self.assertNotIn(m, path, f"import cycle: {' -> '.join(path + [m])}")
            if m in done:
                return
            path.append(m)
            for n in sorted(graph[m]):
                visit(n)
            path.pop()
            done.add(m)

        for m in graph:
            visit(m)

    def test_each_module_alone(self):
        for m in modules() + ["__init__"]:
            name = "sia.torch" if m == "__init__" else f"sia.torch.{m}"
            p = subprocess.run([PYTHON, "-c", f"import {name}"], env=base_env(),
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, f"import {name}:\n{p.stderr}")


if __name__ == "__main__":
    unittest.main()
