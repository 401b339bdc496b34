"""What R calls as "layout.<function>"."""

from ..layout_map.rules import (
    describe_layout_map,
    lookup,
    new_layout_map,
    remove_rule,
    set_rule,
    set_rules,
)

__all__ = [
    "describe_layout_map",
    "lookup",
    "new_layout_map",
    "remove_rule",
    "set_rule",
    "set_rules",
]
