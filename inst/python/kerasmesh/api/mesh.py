"""What R calls as "mesh.<function>"."""

from ..core.mesh import (
    describe_mesh,
    device_mesh,
    resolve_shape,
)

__all__ = [
    "describe_mesh",
    "device_mesh",
    "resolve_shape",
]
