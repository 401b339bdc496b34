"""A compiled step's modeled seconds per global batch, in parts."""

import pytest

from kerasmesh.cost import hlo
from kerasmesh.cost.step_time import step_time
from kerasmesh.topology.machine import as_topology

STEP = """HloModule m, is_scheduled=true
ENTRY %main (w: f32[1000], x: f32[1000000]) -> f32[1000000] {
  %w = f32[1000]{0} parameter(0)
  %x = f32[1000000]{0} parameter(1)
  %ag = f32[8000]{0} all-gather(%w), replica_groups=[1,8]<=[8], dimensions={0}
  %ar = f32[1000000]{0} all-reduce(%x), replica_groups=[1,8]<=[8], to_apply=%add
  ROOT %y = f32[1000000]{0} negate(%ar)
}
"""


def machine():
    return as_topology({
        "nodes": 1, "devices_per_node": 8, "memory": 80e9,
        "peak_flops": 1e12, "intra_node_bandwidth": 1e9,
        "memory_bandwidth": 8e9, "memory_efficiency": 1.0})


def ops():
    from kerasmesh.cost import collectives

    return collectives.parse_collectives(STEP, [8], ["data"])


def test_a_cpu_compiles_weight_collectives_are_hidden_its_others_not():
    module, found = hlo.parse(STEP), ops()
    t = step_time(module, found, [True, False], machine(), [0] * 8,
                  "float32", by_class=True)
    gather = 7 / 8 * 8000 * 4 / 1e9
    reduce = 2 * 7 / 8 * 4e6 / 1e9
    memory = 8e6 / 8e9  # the negate reads and writes 4 MB each
    assert t["parts"]["memory"] == pytest.approx(memory)
    assert t["overlap"] == "class"
    assert t["communication"]["axes"] == ["data"]
    assert t["communication"]["hidden"] == [pytest.approx(gather)]
    assert t["communication"]["exposed"] == [pytest.approx(reduce)]
    assert t["total"] == pytest.approx(memory + reduce)


def test_micro_batches_and_recomputation_split_the_parts():
    module, found = hlo.parse(STEP), ops()
    one = step_time(module, found, [False, False], machine(), [0] * 8,
                    "float32", by_class=False)
    four = step_time(module, found, [False, False], machine(), [0] * 8,
                     "float32", by_class=False, recompute_share=0.25,
                     accumulation_steps=4)
    assert one["overlap"] == "schedule" and one["recompute"] == 0
    assert four["total"] == pytest.approx(4 * one["total"])
    compute = one["compute"]
    assert four["recompute"] == pytest.approx(4 * 0.25 * compute)
    assert four["compute"] == pytest.approx(4 * 0.75 * compute)
    assert four["communication"]["exposed"][0] == \
        pytest.approx(4 * one["communication"]["exposed"][0])
    assert four["accumulation_steps"] == 4
    assert four["flop_rate"] == 1e12 * machine().efficiency
