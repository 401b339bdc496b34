"""What R calls as "cost.<function>"."""

from ..cost.layout_cost import layout_cost
from ..cost.deadline import wait_for_compiles

__all__ = [
    "layout_cost",
    "wait_for_compiles",
]
