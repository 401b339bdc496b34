"""A compiled step walked in the order it runs: asynchronous collectives
hidden by the compute between their start and end, synchronous ones
waited for, and a CPU compile's collectives overlapped by class."""

import pytest

from kerasmesh.cost import hlo, schedule
from kerasmesh.topology.time import MEMORY, Rates

# One operation of 1e6 bytes takes 1 s at 1e6 bytes/s; every collective
# takes `COLLECTIVE` seconds.
COLLECTIVE = 1.5


def rates():
    return Rates(matmul=1e12, attention=1e12, memory=1e6,
                 collective=lambda op: COLLECTIVE)


def step(between: int, sync: str = "") -> str:
    """An all-gather of a weight with `between` operations of 1 s each
    between its start and its end, then one more operation that uses it."""
    lines = ["HloModule m, is_scheduled=true",
             "ENTRY %main (w: f32[10000], x: f32[125000]) -> f32[1] {",
             "  %w = f32[10000]{0} parameter(0)",
             "  %x = f32[125000]{0} parameter(1)",
             "  %ag = (f32[10000]{0}, f32[80000]{0}) all-gather-start(%w), "
             f"replica_groups=[1,8]<=[8], dimensions={{0}}{sync}"]
    # 125000 + 125000 floats of 4 bytes: 1e6 bytes each operation.
    lines += [f"  %f{k} = f32[125000]{{0}} negate(%x)" for k in range(between)]
    lines += ["  %agd = f32[80000]{0} all-gather-done(%ag)",
              "  ROOT %y = f32[1]{0} reduce(%agd), dimensions={0}"]
    return "\n".join(lines + ["}"])


def gather(name, weights=False):
    return {"axes": ["data"], "groups": [], "collective": "all-gather",
            "instruction": name, "weights": weights}


def walk(text, scale=1.0, weights=False):
    ops = [gather("ag", weights)]
    return schedule.walk(schedule.trace(hlo.parse(text), ops), ops, rates(),
                         scale)


@pytest.mark.parametrize("between,exposed", [(0, COLLECTIVE), (1, 0.5),
                                             (2, 0.0)])
def test_compute_between_start_and_end_hides_the_collective(between,
                                                           exposed):
    w = walk(step(between))
    assert w.exposed["data"] == pytest.approx(exposed)
    assert w.hidden["data"] == pytest.approx(COLLECTIVE - exposed)
    assert w.compute[MEMORY] == pytest.approx(between + 0.32, rel=1e-4)
    assert w.total == pytest.approx(sum(w.compute.values()) + exposed)


def test_a_collective_the_compiler_runs_synchronously_is_waited_for():
    w = walk(step(2, sync=', backend_config={"collective_backend_config":'
                          '{"is_sync":true}}'))
    assert w.exposed["data"] == pytest.approx(COLLECTIVE)
    assert w.hidden.get("data", 0.0) == 0.0


def test_collectives_run_one_at_a_time():
    text = step(1).replace(
        "  %f0 =", "  %ag2 = (f32[10000]{0}, f32[80000]{0}) "
        "all-gather-start(%w), replica_groups=[1,8]<=[8], dimensions={0}\n"
        "  %f0 =").replace(
        "  %agd =", "  %agd2 = f32[80000]{0} all-gather-done(%ag2)\n  %agd =")
    ops = [gather("ag"), gather("ag2")]
    w = schedule.walk(schedule.trace(hlo.parse(text), ops), ops, rates())
    # Two of 1.5 s, back to back, beside 1 s of compute: 2 s waited.
    assert w.exposed["data"] == pytest.approx(2.0)
    assert w.hidden["data"] == pytest.approx(1.0)


def test_a_trace_is_plain_values_in_the_order_they_run():
    ops = [gather("ag")]
    entries = schedule.trace(hlo.parse(step(1)), ops)
    assert [e[0] for e in entries] == ["s", "c", "d", "c"]
    assert entries[1] == ["c", MEMORY, 125000.0, 1e6]
    assert entries[0] == ["s", 0] and entries[2] == ["d", 0]


def test_another_micro_batch_scales_work_and_activations_not_weights():
    # Half the micro-batch: each operation takes half the time; a
    # collective of activations takes half too, one of weights all of it.
    half = walk(step(0), scale=0.5)
    assert half.exposed["data"] == pytest.approx(COLLECTIVE / 2)
    assert half.compute[MEMORY] == pytest.approx(0.16, rel=1e-4)
    weights = walk(step(0), scale=0.5, weights=True)
    assert weights.exposed["data"] == pytest.approx(COLLECTIVE)


def test_a_loop_runs_its_body_every_trip():
    text = "\n".join([
        "HloModule m, is_scheduled=true",
        "%body (p: (s32[], f32[125000])) -> (s32[], f32[125000]) {",
        "  %p = (s32[], f32[125000]{0}) parameter(0)",
        "  %x = f32[125000]{0} get-tuple-element(%p), index=1",
        "  %n = f32[125000]{0} negate(%x)",
        "  ROOT %t = (s32[], f32[125000]{0}) tuple(%i, %n)",
        "}",
        "ENTRY %main (x: f32[125000]) -> f32[125000] {",
        '  %w = (s32[], f32[125000]{0}) while(%t), condition=%c, body=%body,'
        ' backend_config={"known_trip_count":{"n":"3"}}',
        "}"])
    entries = schedule.trace(hlo.parse(text), [])
    assert entries == [["l", 3, [["c", MEMORY, 125000.0, 1e6]]]]
    assert schedule.walk(entries, [], rates()).total == pytest.approx(3.0)


def test_a_cpu_compiles_weight_collectives_hide_behind_compute():
    walked = schedule.Walk(compute={MEMORY: 2.0},
                           exposed={"data": 3.0, "model": 1.0}, total=6.0)
    out = schedule.overlap_by_class(walked, {"data": 2.5})
    # 2.5 s of weights' collectives over "data", 2 s of compute to hide
    # them behind; "model" (activations) stays exposed.
    assert out.hidden == {"data": 2.0}
    assert out.exposed == {"data": 1.0, "model": 1.0}
    assert out.total == pytest.approx(2.0 + 2.0)
