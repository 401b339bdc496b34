"""What R calls as "shards.<function>"."""

from ..report.shards import (
    tensor_shards,
    variable_shards,
)

__all__ = [
    "tensor_shards",
    "variable_shards",
]
