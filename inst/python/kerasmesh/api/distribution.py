"""What R calls as "distribution.<function>"."""

from ..train.distribution import (
    data_parallel,
    get_distribution,
    model_parallel,
    set_distribution,
)

__all__ = [
    "data_parallel",
    "get_distribution",
    "model_parallel",
    "set_distribution",
]
