"""What R calls as "mesh.<function>"."""

from ..mesh.device_mesh import (
    describe_mesh,
    device_mesh,
)

__all__ = [
    "describe_mesh",
    "device_mesh",
]
