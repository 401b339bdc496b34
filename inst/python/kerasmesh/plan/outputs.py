"""Layout rules for layer outputs (activations).

Keras's `ModelParallel` looks up every layer's output as well as its
variables: after a layer is called, `Layer.__call__` asks the distribution
for `get_tensor_layout(current_path() + "/output")` and, when a rule
matches, re-lays the output out (`distribute_tensor`). So a key such as
`".*dense.*output"` in a layout map is meant for activations, matches no
variable, and is not a mistake. This module lists the output paths of a
built model's layers, as Keras will look them up, and says which rules
apply to which layers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..core.paths import compact_paths
from ..core.layout_problems import problem
from ..core import kinds
from ..core.text import string

# A key written for outputs: it ends in "output" (or "output$" / "output)").
_OUTPUT_KEY = re.compile(r"output[\)\$]*\Z")


def looks_like_output_key(key: str) -> bool:
    """Whether a rule's key is written for layer outputs."""
    return bool(_OUTPUT_KEY.search(key))


def _own_prefix(layer: Any) -> str | None:
    """The path prefix of the variables a layer creates itself."""
    own = list(getattr(layer, "_trainable_variables", []) or []) + \
        list(getattr(layer, "_non_trainable_variables", []) or [])
    for v in own:
        path = getattr(v, "path", None)
        if path and "/" in path:
            return path.rsplit("/", 1)[0]
    return None


def _children(layer: Any) -> list:
    try:
        return list(layer._flatten_layers(include_self=False,
                                          recursive=False))
    except (AttributeError, TypeError):
        return list(getattr(layer, "layers", []) or [])


def layer_outputs(model: Any) -> list[tuple[Any, str]]:
    """(layer, its output path) for the model and each layer in it, model
    first (`layer_output_paths()` says how paths are made)."""
    import keras

    out = [(model, f"{model.name}/output")]
    seen = {id(model)}
    top = model.name if isinstance(model, keras.Sequential) else ""

    def visit(layer: Any, parent: str) -> None:
        for child in _children(layer):
            if id(child) in seen or isinstance(child, keras.layers.InputLayer):
                continue
            seen.add(id(child))
            path = _own_prefix(child) or (
                f"{parent}/{child.name}" if parent else child.name)
            out.append((child, f"{path}/output"))
            visit(child, path)

    visit(model, top)
    return out


def layer_output_paths(model: Any) -> list[dict]:
    """The output path of each layer, as Keras looks it up when called.

    Layers of a functional model are called where the model is built, so
    their paths are their names (`dense/output`); a Sequential model calls
    its layers inside its own name (`sequential/dense/output`), and layers
    call their sublayers inside theirs (`decoder_block_0/attention/query/
    output`). A layer's own variables, when it has any, fix its path. The
    model itself is looked up as `<model>/output` when it is called.

    Returns:
        [{"path": ".../output", "layer": class name}], model first.
    """
    return [{"path": path, "layer": type(layer).__name__}
            for layer, path in layer_outputs(model)]


def output_rules(keys: Sequence[str], patterns: Sequence[re.Pattern],
                 used: dict[str, int], outputs: list[dict]) -> dict:
    """Which rules apply to layer outputs, and which output rules to none.

    Args:
        keys: the layout map's keys; `patterns` their compiled forms.
        used: how many variables each key decides.
        outputs: `layer_output_paths()`.

    Returns:
        {"rules": [{"key", "layers", "paths", "listing"}] for the keys that
        match no variable but some layer output, "unmatched": keys written
        for outputs (`looks_like_output_key()`) that match neither}.
    """
    exact = set(keys)
    rules, unmatched = [], []
    for key, pattern in zip(keys, patterns):
        if used.get(key, 0):
            continue
        hits = [o for o in outputs
                if o["path"] == key or (o["path"] not in exact
                                        and pattern.fullmatch(o["path"]))]
        if hits:
            hit_paths = [h["path"][:-len("/output")] for h in hits]
            rules.append({
                "key": key,
                "layers": len(hits),
                "paths": [h["path"] for h in hits],
                "classes": sorted({h["layer"] for h in hits}),
                "listing": compact_paths(hit_paths),
            })
        elif looks_like_output_key(key):
            unmatched.append(key)
    return {"rules": rules, "unmatched": unmatched}


def unmatched_output_problem(key: str, outputs: list[dict]) -> dict:
    """A warning for a rule written for outputs that matches no layer."""
    example = next((o["path"] for o in outputs[1:]), outputs[0]["path"])
    return problem(
        kinds.UNMATCHED_OUTPUT_RULE, "warning", None, key,
        f'Rule {string(key)} matches no variable and no layer output.',
        [("x", "Keras looks layer outputs up as \"<layer path>/output\": "
               "this rule relays out nothing."),
         ("i", f'Layer outputs look like "{example}"; rules must match the '
               "whole path.")],
        "matches no layer output")
