"""What R calls as "plan.<function>"."""

from ..plan.planner import (
    plan_layout,
)

__all__ = [
    "plan_layout",
]
