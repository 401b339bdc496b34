"""What R calls as "layout.<function>"."""

from ..layout_map.rules import (
    copy_layout_map,
    describe_layout_map,
    lookup,
    new_layout_map,
    remove_rule,
    set_rule,
    set_rules,
)

__all__ = [
    "copy_layout_map",
    "describe_layout_map",
    "lookup",
    "new_layout_map",
    "remove_rule",
    "set_rule",
    "set_rules",
]
