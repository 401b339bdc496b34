"""What R calls as "blocks.<function>"."""

from ..report.blocks import (
    sharding_blocks,
    variable_blocks,
)

__all__ = [
    "sharding_blocks",
    "variable_blocks",
]
