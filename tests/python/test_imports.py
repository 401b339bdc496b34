"""How the shim's modules import each other: no cycles, each package only
the packages ARCHITECTURE.md's table lists for it, R's names only in
`api/`, and imports inside functions only where start-up needs them.

The checks take the trees and tables they read, so the tests below run
them on small made-up ones too and see each rule fail."""

import ast
import os
import re

import pytest

import kerasmesh
from source_trees import write_tree

SHIM = os.path.dirname(kerasmesh.__file__)
ARCHITECTURE = os.path.join(os.path.dirname(__file__), "..", "..",
                            "ARCHITECTURE.md")
# Importing one of these starts Keras (which fixes its backend) or JAX:
# modules import them inside the function that needs them, after
# `require_backend()` has checked the backend.
DEFERRED = ("keras", "jax", "jaxlib", "numpy", "orbax")


def modules(root=SHIM):
    """{"mesh.device_mesh": parsed tree} for every module below `root`."""
    out = {}
    for folder, _, files in os.walk(root):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, root)[:-3].replace(os.sep, ".")
                with open(path, encoding="utf-8") as f:
                    out[rel.removesuffix(".__init__")] = ast.parse(f.read())
    return out


def target(module, node):
    """The shim module a relative `from` import names, or None."""
    if node.level == 0:
        return None
    package = module.split(".")[:-1] if not module.endswith("__init__") \
        else module.split(".")
    base = package[:len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def top_level_edges(tree_by_module):
    edges = {}
    for module, tree in tree_by_module.items():
        found = set()
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.level:
                name = target(module, node)
                if name in tree_by_module:
                    found.add(name)
                for alias in node.names:
                    sub = f"{name}.{alias.name}" if name else alias.name
                    if sub in tree_by_module:
                        found.add(sub)
        edges[module] = found - {module}
    return edges


def cycle(edges):
    """One import cycle as a list of modules, or None."""
    state = {}

    def visit(m, stack):
        state[m] = "open"
        for n in sorted(edges.get(m, ())):
            if state.get(n) == "open":
                return stack[stack.index(n):] + [n]
            if n not in state:
                found = visit(n, stack + [n])
                if found:
                    return found
        state[m] = "done"
        return None

    for m in sorted(edges):
        if m not in state:
            found = visit(m, [m])
            if found:
                return found
    return None


def test_the_modules_import_each_other_without_a_cycle():
    edges = top_level_edges(modules())
    assert len(edges) > 40
    assert cycle(edges) is None


def test_the_cycle_check_finds_a_cycle():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None


def deferred_imports(tree_by_module):
    """(module, line, imported name) of every import inside a function."""
    out = []
    for module, tree in tree_by_module.items():
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Import):
                    out += [(module, node.lineno, a.name) for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    name = ("." * node.level) + (node.module or "")
                    out.append((module, node.lineno, name))
    return out


def layer_table(path=ARCHITECTURE):
    """{package: the packages it may import} from the table that follows
    "test_imports.py reads this table" in the markdown file at `path`."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    start = next(i for i, line in enumerate(lines)
                 if "test_imports.py reads this table" in line)
    rows = []
    for line in lines[start:]:
        if line.startswith("|"):
            rows.append(line)
        elif rows:
            break
    table = {}
    for row in rows[2:]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        package = re.findall(r"`([\w]+)/`", cells[0])[0]
        table[package] = set(re.findall(r"`([\w]+)/`", cells[-1]))
    return table


def package_imports(edges):
    """{package: the other packages its modules import at the top}; the
    top of the tree (`kerasmesh/__init__.py`, module "__init__") is left
    out: it is no package's."""
    out = {}
    for module, targets in edges.items():
        if module == "__init__":
            continue
        package = module.split(".")[0]
        out.setdefault(package, set())
        out[package] |= {t.split(".")[0] for t in targets} - {package}
    return out


def layer_problems(imports, table):
    """What breaks the table: a package it lacks, one it lists that does
    not exist, or an import of a package its row does not list."""
    problems = [f"{p}/ is not in the table" for p in sorted(imports)
                if p not in table]
    problems += [f"{p}/ is in the table but not in the shim"
                 for p in sorted(table) if p not in imports]
    for package in sorted(set(imports) & set(table)):
        for other in sorted(imports[package] - table[package]):
            problems.append(f"{package}/ imports {other}/, which its row "
                            "does not list")
    return problems


def upward_rows(table):
    """Where the table itself breaks the layering: a row that lists a
    package whose row comes later (or its own), since each package may
    import only the layers below it, the rows above its own."""
    problems = []
    above = []
    for package, allowed in table.items():
        for other in sorted(allowed - set(above)):
            where = "its own" if other == package else "a later row"
            problems.append(f"{package}/ lists {other}/, {where}")
        above.append(package)
    return problems


def test_each_package_imports_only_what_architecture_md_lists():
    table = layer_table()
    assert {"core", "mesh", "plan", "cost", "api"} <= set(table)
    assert table["core"] == set()
    imports = package_imports(top_level_edges(modules()))
    assert layer_problems(imports, table) == []


def test_the_layer_table_lists_only_the_layers_below_each_package():
    table = layer_table()
    assert list(table)[0] == "core" and list(table)[-1] == "api"
    assert upward_rows(table) == []


def test_the_layer_check_finds_an_import_the_table_does_not_list(tmp_path):
    shim = tmp_path / "kerasmesh"
    write_tree(str(shim), {
        "__init__.py": "from .core.errors import E\n",
        "core/__init__.py": "", "core/errors.py": "E = 1\n",
        "plan/__init__.py": "",
        "plan/planner.py": "from ..core.errors import E\n"
                           "from ..cost.step import S\n",
        "cost/__init__.py": "", "cost/step.py": "S = 1\n",
        "extra/__init__.py": "",
    })
    (tmp_path / "ARCHITECTURE.md").write_text(
        "<!-- test_imports.py reads this table -->\n\n"
        "| Package | Holds | Imports |\n|---|---|---|\n"
        "| `core/` | kernel | nothing |\n"
        "| `plan/` | plans | `core/` |\n"
        "| `cost/` | costs | `core/`, `plan/` |\n"
        "| `gone/` | nothing | `core/` |\n", encoding="utf-8")
    imports = package_imports(top_level_edges(modules(str(shim))))
    assert imports["plan"] == {"core", "cost"}
    assert layer_problems(imports, layer_table(tmp_path / "ARCHITECTURE.md")) \
        == ["extra/ is not in the table",
            "gone/ is in the table but not in the shim",
            "plan/ imports cost/, which its row does not list"]


def test_a_row_that_lists_a_later_layer_is_reported():
    table = {"core": set(), "plan": {"core", "cost"}, "cost": {"core", "plan"},
             "api": {"api", "core", "plan", "cost"}}
    assert upward_rows(table) == ["plan/ lists cost/, a later row",
                                  "api/ lists api/, its own"]


def test_imports_inside_functions_are_only_of_what_starts_keras_or_jax():
    found = deferred_imports(modules())
    assert len(found) > 20
    others = [x for x in found if x[2].split(".")[0] not in DEFERRED
              and not (x[0] == "checkpoint.commit" and x[2] == "fcntl")]
    assert not others, f"import these at the top of the module: {others}"


def test_r_reaches_only_the_api_layer():
    with pytest.raises(ModuleNotFoundError):
        kerasmesh._function("planner.plan_layout")
    with pytest.raises(AttributeError):
        kerasmesh._function("plan.first_error")
    assert kerasmesh._function("plan.plan_layout").__name__ == "plan_layout"


def test_api_modules_only_re_export():
    api = {m: t for m, t in modules().items() if m.startswith("api.")}
    assert len(api) > 10
    for module, tree in api.items():
        defined = [n for n in tree.body
                   if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
        assert not defined, module


def test_the_topology_package_imports_only_core():
    edges = top_level_edges(modules())
    topology = {m: e for m, e in edges.items() if m.startswith("topology")}
    assert "topology.time" in topology and "topology.machine" in topology
    for module, imported in topology.items():
        outside = {i for i in imported
                   if i.split(".")[0] not in ("core", "topology")}
        assert not outside, f"{module} imports {sorted(outside)}"
