"""What R calls as "remat.<function>"."""

from ..remat.choice import set_remat

__all__ = [
    "set_remat",
]
