"""Where the coordinator is: Keras's `KERAS_DISTRIBUTION_*` variables and
"host:port" addresses, shared by `initialize.py` and `connect.py`."""

from __future__ import annotations

import re
from typing import Any

from ..core.errors import KerasmeshError
from ..core import kinds

ENV_ADDRESSES = "KERAS_DISTRIBUTION_JOB_ADDRESSES"
ENV_NUM_PROCESSES = "KERAS_DISTRIBUTION_NUM_PROCESSES"
ENV_PROCESS_ID = "KERAS_DISTRIBUTION_PROCESS_ID"

# host:port, where host is a name, an IPv4 address or a bracketed IPv6 one.
_ADDRESS = re.compile(
    r"^(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.\-_]*[A-Za-z0-9])?)"
    r":(?P<port>[0-9]{1,5})$")
# A host name has at most 253 characters, a port 5 digits.
MAX_ADDRESS_CHARS = 300


def parse_address(address: Any, source: str = "`coordinator_address`"
                  ) -> tuple[str, int]:
    """Split "host:port" into host and port.

    Raises:
        KerasmeshError: kind `distributed_argument` unless `address` is a
            host (name, IPv4 or [IPv6]) and a port from 1 to 65535.
    """
    if not isinstance(address, str):
        raise KerasmeshError(
            kinds.DISTRIBUTED_ARGUMENT, f"{source} must be a string \"host:port\".",
            received=address)
    if len(address) > MAX_ADDRESS_CHARS:
        raise KerasmeshError(
            kinds.DISTRIBUTED_ARGUMENT,
            f"{source} must be at most {MAX_ADDRESS_CHARS:,} characters.",
            x=f"It has {len(address):,}, starting \"{address[:20]}\".")
    match = _ADDRESS.match(address.strip())
    port = int(match.group("port")) if match else 0
    if match is None or not 1 <= port <= 65535:
        raise KerasmeshError(
            kinds.DISTRIBUTED_ARGUMENT,
            f"{source} must be \"host:port\" with a port from 1 to 65535.",
            received=address,
            i="The coordinator is process 0, e.g. \"10.0.0.1:1234\" or "
              "\"127.0.0.1:1234\" on one machine.")
    return match.group("host"), port
