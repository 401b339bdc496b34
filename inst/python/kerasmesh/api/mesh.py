"""What R calls as "mesh.<function>"."""

from ..mesh.device_mesh import (
    describe_mesh,
    device_mesh,
    resolve_shape,
)

__all__ = [
    "describe_mesh",
    "device_mesh",
    "resolve_shape",
]
