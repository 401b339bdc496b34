"""How the shim's modules import each other: no cycles, R's names only in
`api/`, and imports inside functions only where start-up needs them."""

import ast
import os

import pytest

import kerasmesh

SHIM = os.path.dirname(kerasmesh.__file__)
# Importing one of these starts Keras (which fixes its backend) or JAX:
# modules import them inside the function that needs them, after
# `require_backend()` has checked the backend.
DEFERRED = ("keras", "jax", "jaxlib", "numpy", "orbax")


def modules():
    """{"core.mesh": parsed tree} for every module of the shim."""
    out = {}
    for folder, _, files in os.walk(SHIM):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, SHIM)[:-3].replace(os.sep, ".")
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
