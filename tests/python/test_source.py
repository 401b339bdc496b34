"""The shim's source as a whole, every subpackage included: each module has
its test file, files and functions past the size for review are listed
(not refused: size is a question of topics), and nothing defined that only
tests use.

Each check takes the folders it reads, so that the tests below can run it on
small trees made for them too, nested or flat, and see each rule fail."""

import ast
import os
import re
import shutil
import warnings

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
SHIM = os.path.join(ROOT, "inst", "python", "kerasmesh")
R_DIR = os.path.join(ROOT, "R")
# The registry of condition kinds declares every kind, also those only R
# raises (test_core_kinds.py checks that each is raised somewhere).
REGISTRY = os.path.join("core", "kinds.py")
TESTS = os.path.dirname(__file__)
# The sizes past which a file or a function is listed for review: does it
# hold two topics? (CONTRIBUTING.md). A listing, never a failure.
MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 60
MAX_R_FILE_LINES = 350


class SizeReview(UserWarning):
    """A file or function past the size for review, shown in pytest's
    warnings summary."""


def python_files(root):
    """Paths of the .py files at or below `root`, relative to it, sorted."""
    out = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs
                   if d != "__pycache__" and not d.startswith(".")]
        out += [os.path.relpath(os.path.join(folder, f), root)
                for f in files if f.endswith(".py")]
    return sorted(out)


def r_files(root):
    """The .R files in `root`, sorted."""
    return sorted(f for f in os.listdir(root) if f.endswith(".R"))


def expected_test_file(module):
    """The test file's name for a module's path below the shim, or None.

    The module's path with `_` for `/`: `mesh.py` -> `test_mesh.py`,
    `plan/rules.py` -> `test_plan_rules.py`. A package's `__init__.py`
    needs none. The names are unique by construction, so the test files
    may sit in one folder or in any folders below tests/python without two
    `test_rules.py` colliding in pytest's default (prepend) import mode.
    `api/`'s modules only re-export what their topics define and test
    (test_imports.py checks that), so they need none either.
    """
    parts = module[:-len(".py")].split(os.sep)
    if parts[-1] == "__init__" or "api" in parts[:-1]:
        return None
    return "test_" + "_".join(parts) + ".py"


def missing_test_files(shim, tests):
    """The test files that modules below `shim` lack anywhere below
    `tests`, sorted."""
    present = {os.path.basename(p) for p in python_files(tests)}
    wanted = {expected_test_file(m) for m in python_files(shim)}
    return sorted(t for t in wanted - present if t is not None)


def long_files(root, limit, files=python_files):
    """"path: N lines" for each .py file below `root` (or each file
    `files(root)` lists) over `limit` lines."""
    out = []
    for path in files(root):
        with open(os.path.join(root, path), encoding="utf-8") as f:
            n = len(f.readlines())
        if n > limit:
            out.append(f"{path}: {n} lines")
    return out


def function_lengths(root):
    """(lines from decorator or def to end, "path:line name") for each
    function and method below `root`, nested ones included."""
    out = []
    for path in python_files(root):
        with open(os.path.join(root, path), encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno] +
                            [d.lineno for d in node.decorator_list])
                out.append((node.end_lineno - start + 1,
                            f"{path}:{node.lineno} {node.name}"))
    return out


def long_functions(root, limit):
    """The entries of `function_lengths()` over `limit` lines, sorted."""
    return sorted(x for x in function_lengths(root) if x[0] > limit)


def module_definitions(root):
    """(name, "path:line") of each function, class and constant a module
    below `root` defines at its top level, `__all__` and dunders left
    out."""
    out = []
    for path in python_files(root):
        with open(os.path.join(root, path), encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                 ast.ClassDef)):
                names = [node.name]
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) \
                    else [node.target]
                names = [t.id for t in targets if isinstance(t, ast.Name)]
            else:
                continue
            out += [(n, f"{path}:{node.lineno}") for n in names
                    if not n.startswith("__")]
    return out


def unused_definitions(root, r_dir, exempt=()):
    """"path:line name" for each definition below `root` that nothing uses:
    its name appears once in the shim (where it is defined) and nowhere in
    the R files of `r_dir`. What only tests call is not the shim's: a test
    defines or injects it itself. Modules in `exempt` are left out."""
    texts = []
    for path in python_files(root):
        with open(os.path.join(root, path), encoding="utf-8") as f:
            texts.append(f.read())
    for name in sorted(os.listdir(r_dir)):
        if name.endswith(".R"):
            with open(os.path.join(r_dir, name), encoding="utf-8") as f:
                texts.append(f.read())
    text = "\n".join(texts)
    out = []
    for name, where in module_definitions(root):
        if where.split(":")[0] in exempt:
            continue
        if len(re.findall(rf"\b{re.escape(name)}\b", text)) < 2:
            out.append(f"{where} {name}")
    return out


def test_every_module_has_its_test_file():
    assert not missing_test_files(SHIM, TESTS)


def test_files_and_functions_past_the_size_for_review_are_listed():
    assert len(python_files(SHIM)) > 30
    assert len(function_lengths(SHIM)) > 100
    past = long_files(SHIM, MAX_FILE_LINES) + \
        [f"tests/python/{x}" for x in long_files(TESTS, MAX_FILE_LINES)] + \
        [f"{name}: {n} lines" for n, name in
         long_functions(SHIM, MAX_FUNCTION_LINES)] + \
        [f"R/{x}" for x in long_files(R_DIR, MAX_R_FILE_LINES, r_files)]
    for item in past:
        warnings.warn(SizeReview(
            f"{item}, past the size for review: does it hold two topics?"),
            stacklevel=1)


def test_the_shim_defines_nothing_only_tests_use():
    assert len(module_definitions(SHIM)) > 300
    unused = unused_definitions(SHIM, R_DIR, exempt=(REGISTRY,))
    assert not unused, f"used by nothing but tests: {unused}"


# --- the checks themselves ---------------------------------------------------


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def function_of(lines, name="f"):
    """Source of one function `lines` lines long, decorator included."""
    return ("@staticmethod\n" f"def {name}():\n"
            + "    x = 1\n" * (lines - 2))


@pytest.fixture()
def nested_copy(tmp_path):
    """The shim with each top-level module moved one package down (into
    `topic/`), and empty test files named to match, in a folder below."""
    shim, tests = tmp_path / "kerasmesh", tmp_path / "tests"
    for module in python_files(SHIM):
        where = module if module == "__init__.py" else os.path.join(
            "topic", module)
        os.makedirs(os.path.dirname(shim / where), exist_ok=True)
        shutil.copyfile(os.path.join(SHIM, module), shim / where)
        if expected_test_file(where):
            write(str(tests / "topic" / expected_test_file(where)), "")
    write(str(shim / "topic" / "__init__.py"), "")
    return str(shim), str(tests)


def test_the_checks_walk_subpackages(nested_copy):
    shim, tests = nested_copy
    modules = [m for m in python_files(shim) if m != "__init__.py"]
    assert len(modules) == len(python_files(SHIM))
    assert all(m.startswith("topic" + os.sep) for m in modules)
    assert len(function_lengths(shim)) == len(function_lengths(SHIM))
    assert not missing_test_files(shim, tests)
    # The same files and functions past the size for review, found one
    # package down (a size is reported, never a failure).
    assert len(long_files(shim, MAX_FILE_LINES)) == \
        len(long_files(SHIM, MAX_FILE_LINES))
    assert len(long_functions(shim, MAX_FUNCTION_LINES)) == \
        len(long_functions(SHIM, MAX_FUNCTION_LINES))
    # The flat tests' names do not serve the nested modules.
    assert len(missing_test_files(shim, TESTS)) == \
        len([m for m in modules if expected_test_file(m)])


def test_a_module_in_a_subpackage_maps_to_its_path_in_the_test_name():
    assert expected_test_file("mesh.py") == "test_mesh.py"
    assert expected_test_file(os.path.join("plan", "rules.py")) == \
        "test_plan_rules.py"
    assert expected_test_file(os.path.join("plan", "__init__.py")) is None
    assert expected_test_file(os.path.join("api", "plan.py")) is None


def test_a_module_without_its_test_file_is_reported(tmp_path):
    write(str(tmp_path / "shim" / "plan" / "rules.py"), "")
    write(str(tmp_path / "shim" / "plan" / "__init__.py"), "")
    write(str(tmp_path / "shim" / "mesh.py"), "")
    write(str(tmp_path / "tests" / "test_mesh.py"), "")
    # A test named for the module's base name alone does not count.
    write(str(tmp_path / "tests" / "test_rules.py"), "")
    shim, tests = str(tmp_path / "shim"), str(tmp_path / "tests")
    assert missing_test_files(shim, tests) == ["test_plan_rules.py"]
    write(str(tmp_path / "tests" / "plan" / "test_plan_rules.py"), "")
    assert missing_test_files(shim, tests) == []


def test_a_python_file_over_400_lines_is_reported(tmp_path):
    write(str(tmp_path / "plan" / "rules.py"), "x = 1\n" * 401)
    write(str(tmp_path / "plan" / "cost.py"), "x = 1\n" * 400)
    assert long_files(str(tmp_path), MAX_FILE_LINES) == [
        f"{os.path.join('plan', 'rules.py')}: 401 lines"]


def test_a_function_over_60_lines_is_reported(tmp_path):
    write(str(tmp_path / "plan" / "rules.py"),
          function_of(61, "long") + "\n\n" + function_of(60, "short"))
    assert sorted(n for n, _ in function_lengths(str(tmp_path))) == [60, 61]
    assert long_functions(str(tmp_path), MAX_FUNCTION_LINES) == [
        (61, f"{os.path.join('plan', 'rules.py')}:2 long")]


def test_a_definition_only_tests_use_is_reported(tmp_path):
    shim, r_dir = tmp_path / "kerasmesh", tmp_path / "R"
    write(str(shim / "core" / "hooks.py"),
          "_PENDING = []\nLIMIT = 3\n\n\n"
          "def kill_point(name):\n    return name\n\n\n"
          "def used(x):\n    return x < LIMIT\n\n\n"
          "def called_by_r(x):\n    return used(x)\n")
    write(str(shim / "core" / "kinds.py"), "UNUSED_KIND = 'k'\n")
    write(str(r_dir / "a.R"), 'f <- function() shim_call("core.called_by_r")\n')
    hooks = os.path.join("core", "hooks.py")
    assert unused_definitions(str(shim), str(r_dir), exempt=(REGISTRY,)) \
        == [f"{hooks}:1 _PENDING", f"{hooks}:5 kill_point"]


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
