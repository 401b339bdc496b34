"""The shim's source as a whole: each module has its test file, and no
function is longer than a screen."""

import ast
import glob
import os

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
SHIM = os.path.join(ROOT, "inst", "python", "kerasmesh")
TESTS = os.path.dirname(__file__)
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 400


def function_lengths():
    """(lines from decorator or def to end, "file:line name") per function."""
    out = []
    for path in sorted(glob.glob(os.path.join(SHIM, "**", "*.py"),
                                 recursive=True)):
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
    """`kerasmesh/<package>/<module>.py` is tested in
    `test_<package>_<module>.py`; `api/` only re-exports (test_imports.py)."""
    modules = [os.path.relpath(p, SHIM)[:-3].replace(os.sep, "_")
               for p in glob.glob(os.path.join(SHIM, "*", "*.py"))]
    assert len(modules) > 40
    missing = sorted(f"test_{m}.py" for m in modules
                     if not m.endswith("__init__") and not m.startswith("api_")
                     and not os.path.exists(os.path.join(TESTS,
                                                         f"test_{m}.py")))
    assert not missing


def test_no_function_is_longer_than_a_screen():
    lengths = function_lengths()
    assert len(lengths) > 100
    long = sorted(x for x in lengths if x[0] > MAX_FUNCTION_LINES)
    assert not long, f"split these: {long}"


def test_no_module_is_longer_than_400_lines():
    """Split a module by topic before it reaches the limit."""
    long = []
    for path in glob.glob(os.path.join(SHIM, "**", "*.py"), recursive=True):
        with open(path, encoding="utf-8") as f:
            n = sum(1 for _ in f)
        if n > MAX_MODULE_LINES:
            long.append((n, os.path.relpath(path, SHIM)))
    assert not long, f"split these by topic: {sorted(long)}"


def test_development_setup_installs_the_package_pinned_list():
    """tools/requirements.txt includes inst/python/requirements.txt, the one
    list install_kerasmesh() installs and py_require() declares."""
    with open(os.path.join(ROOT, "tools", "requirements.txt")) as f:
        lines = [line.strip() for line in f]
    assert "-r ../inst/python/requirements.txt" in lines
    pinned = os.path.join(ROOT, "inst", "python", "requirements.txt")
    with open(pinned) as f:
        names = [line.split("==")[0].split(">=")[0].strip() for line in f
                 if line.strip() and not line.startswith("#")]
    assert {"keras", "jax", "orbax-checkpoint"} <= set(names)
    assert not [n for n in names if "tensorflow" in n]
