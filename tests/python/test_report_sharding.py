"""Sharding facts of placed arrays: shards, copies and bytes per device."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from kerasmesh.core.placement import sharding_placement
from kerasmesh.report import sharding

MESH = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))


def test_partition_specs_print_every_entry():
    assert sharding.format_partition_spec(None) is None
    spec = PartitionSpec(None, "model")
    assert sharding.format_partition_spec(spec) == \
        "PartitionSpec(None, 'model')"


def test_shards_of_a_matrix_split_over_model_are_four_column_shards():
    shards = sharding.shards_of(
        NamedSharding(MESH, PartitionSpec(None, "model")), (4, 8))
    assert shards["start"] == [[0, 0], [0, 2], [0, 4], [0, 6]]
    assert shards["stop"] == [[4, 2], [4, 4], [4, 6], [4, 8]]
    # Each shard lives on the two devices of one column of the mesh.
    assert shards["devices"][0] == ["cpu:0", "cpu:4"]


def test_placement_facts_count_copies_and_bytes():
    placement = sharding_placement(
        NamedSharding(MESH, PartitionSpec(None, "model")), (4, 8), 4)
    facts = sharding.placement_facts(placement)
    assert facts == {"shard_shape": [4, 2], "copies": 2,
                     "bytes": 128.0, "device_bytes": 32.0}


def test_array_sharding_describes_a_placed_array():
    value = jax.device_put(jnp.zeros((4, 8), "float32"),
                           NamedSharding(MESH, PartitionSpec("data", None)))
    out = sharding.array_sharding(value)
    assert out["shape"] == [4, 8]
    assert out["axes"] == ["data", None]
    assert out["shard_shape"] == [2, 8] and out["copies"] == 4
    assert len(out["local_shards"]) == 8
    assert out["local_shards"][0] == ("cpu:0", 64.0)
