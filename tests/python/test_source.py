"""The shim's source as a whole: each module has its test file, and no
function is longer than a screen."""

import ast
import glob
import os

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
SHIM = os.path.join(ROOT, "inst", "python", "kerasmesh")
TESTS = os.path.dirname(__file__)
MAX_FUNCTION_LINES = 60


def function_lengths():
    """(lines from decorator or def to end, "file:line name") per function."""
    out = []
    for path in sorted(glob.glob(os.path.join(SHIM, "*.py"))):
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno] +
                            [d.lineno for d in node.decorator_list])
                out.append((node.end_lineno - start + 1,
                            f"{os.path.basename(path)}:{node.lineno} "
                            f"{node.name}"))
    return out


def test_every_module_has_its_test_file():
    modules = [os.path.basename(p)[:-3]
               for p in glob.glob(os.path.join(SHIM, "*.py"))]
    missing = sorted(f"test_{m}.py" for m in modules if m != "__init__"
                     and not os.path.exists(os.path.join(TESTS,
                                                         f"test_{m}.py")))
    assert not missing


def test_no_function_is_longer_than_a_screen():
    lengths = function_lengths()
    assert len(lengths) > 100
    long = sorted(x for x in lengths if x[0] > MAX_FUNCTION_LINES)
    assert not long, f"split these: {long}"
