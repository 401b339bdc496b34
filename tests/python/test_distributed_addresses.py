"""Coordinator addresses: "host:port" parsed, or an error naming it."""

import pytest

from kerasmesh.distributed import addresses as d
from kerasmesh.core.errors import KerasmeshError


def kind_of(fn, *args, **kwargs):
    with pytest.raises(KerasmeshError) as info:
        fn(*args, **kwargs)
    return info.value


@pytest.mark.parametrize("address,host,port", [
    ("127.0.0.1:1234", "127.0.0.1", 1234),
    ("node-0.cluster.local:80", "node-0.cluster.local", 80),
    ("[::1]:65535", "[::1]", 65535),
    (" 10.0.0.1:1 ", "10.0.0.1", 1),
])
def test_parse_address_accepts_host_and_port(address, host, port):
    assert d.parse_address(address) == (host, port)


@pytest.mark.parametrize("address", [
    "127.0.0.1", "127.0.0.1:", ":1234", "127.0.0.1:0", "127.0.0.1:65536",
    "127.0.0.1:12a", "host name:12", "", 1234, None,
])
def test_parse_address_rejects_malformed_addresses(address):
    e = kind_of(d.parse_address, address)
    assert e.kind == "distributed_argument"
    assert "`coordinator_address`" in e.message
    assert e.bullets[0][1] == "Received {value}."
    assert e.bullets[0][2]["values" if address is not None else "type"] == \
        ([address] if address is not None else "null")
