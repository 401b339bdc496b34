"""What R calls as "devices.<function>"."""

from ..mesh.devices import (
    list_devices,
    local_cpu_device_count,
)

__all__ = [
    "list_devices",
    "local_cpu_device_count",
]
