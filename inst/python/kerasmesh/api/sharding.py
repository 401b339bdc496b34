"""What R calls as "sharding.<function>"."""

from ..report.sharding import (
    variable_sharding,
)

__all__ = [
    "variable_sharding",
]
