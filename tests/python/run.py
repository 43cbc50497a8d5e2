"""Runs one test module of tests/python: run.py test_NAME [unittest args].

Exits 77 (skipped, for ctest) when the module needs torch and the interpreter
has none.
"""

import importlib
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
name = sys.argv[1]


def skip():
    print(f"{name}: skipped: {sys.executable} cannot import torch")
    sys.exit(77)


try:
    module = importlib.import_module(name)
except ModuleNotFoundError as e:
    if e.name != "torch":
        raise
    skip()
if getattr(module, "NEEDS_TORCH", False):
    try:
        import torch  # noqa: F401
    except ImportError:
        skip()
program = unittest.main(module=module, argv=[name] + sys.argv[2:], exit=False,
                        verbosity=2)
sys.exit(0 if program.result.wasSuccessful() else 1)
