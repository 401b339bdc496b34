"""What R calls as "compare.<function>"."""

from ..cost.compare import (
    layout_costs,
)

__all__ = [
    "layout_costs",
]
