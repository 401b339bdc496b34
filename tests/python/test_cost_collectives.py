"""The collectives of a compiled step: synchronous ones, the asynchronous
pairs of a GPU compile, their bytes, device groups and mesh axes."""

from kerasmesh.cost import collectives, hlo

def test_collective_lines_parse_with_bytes_per_collective():
    text = "\n".join([
        "  %ar = (f32[], f32[16,32]{1,0}) all-reduce(%a, %b), channel_id=3,"
        " replica_groups={{0,4},{1,5},{2,6},{3,7}}, to_apply=%add",
        "  ROOT %ag = bf16[8,64]{0,1} all-gather-start(%c), "
        "replica_groups=[2,4]<=[8], dimensions={1}",
        "  %ag.done = bf16[8,64]{0,1} all-gather-done(%ag)",
        "  %rs = f32[4,8]{1,0} reduce-scatter(%d), "
        "replica_groups=[2,4]<=[8], dimensions={0}",
        "  %cp = f32[2]{0} collective-permute(%e), "
        "source_target_pairs={{0,1},{1,0}}",
        "  %f = f32[2]{0} fusion(%all-reduce), kind=kLoop",
    ])
    ops = collectives.parse_collectives(text, [2, 4], ["data", "model"])
    assert [o["collective"] for o in ops] == ["all-reduce", "all-gather",
                                        "reduce-scatter",
                                        "collective-permute"]
    assert [o["bytes"] for o in ops] == [4 + 16 * 32 * 4, 8 * 64 * 2,
                                         4 * 8 * 4 * 4, 8]
    assert [o["axes"] for o in ops] == [["data"], ["model"], ["model"],
                                        ["model"]]
    summary = collectives.summarise_collectives(ops)
    assert summary["count"] == [1, 1, 1, 1]
    assert summary["bytes"][0] == max(o["bytes"] for o in ops)


def test_parsed_collectives_carry_one_name_per_result_array():
    line = ("  %all-reduce.8 = (f32[], f32[16,32]{1,0}) all-reduce(%a, %b), "
            "channel_id=3, replica_groups=[2,4]<=[8], to_apply=%add, "
            'metadata={op_name="jit(step)/(jvp()/reduce_sum:transpose('
            'jvp(dense))/dot_general)" stack_frame_id=39}')
    op, = collectives.parse_collectives(line, [2, 4], ["data", "model"])
    assert op["names"] == ["jit(step)/jvp()/reduce_sum",
                           "jit(step)/transpose(jvp(dense))/dot_general"]
    assert hlo.element_bytes([16, 32], "f32") + \
        hlo.element_bytes([], "f32") == op["bytes"]


def test_all_reduces_that_devices_slice_are_reduce_scatters():
    groups = "replica_groups=mesh['axis_0'=8] {'axis_0'}, to_apply=%add"
    text = "\n".join([
        f"  %all-reduce.1 = f16[64,32]{{1,0}} all-reduce(%dot.1), {groups}",
        "  %fusion.1 = f32[8,32]{1,0} fusion(%all-reduce.1, %partition-id.3),"
        " kind=kLoop, calls=%fused_computation.1",
        f"  %all-reduce.2 = f32[64,32]{{1,0}} all-reduce(%dot.2), {groups}",
        "  %dynamic-slice.2 = f32[8,32]{1,0} dynamic-slice(%all-reduce.2, "
        "%offset, %zero), dynamic_slice_sizes={8,32}",
        # Used whole, beside a slice of it: a device needs all of it.
        f"  %all-reduce.3 = f32[64,32]{{1,0}} all-reduce(%dot.3), {groups}",
        "  %fusion.3 = f32[8,32]{1,0} fusion(%all-reduce.3, %partition-id.3),"
        " kind=kLoop, calls=%fused_computation.3",
        "  %multiply.3 = f32[64,32]{1,0} multiply(%all-reduce.3, %x)",
        # A part larger than one device's: not a reduce-scatter.
        f"  %all-reduce.4 = f32[64,32]{{1,0}} all-reduce(%dot.4), {groups}",
        "  %fusion.4 = f32[16,32]{1,0} fusion(%all-reduce.4, %partition-id.3),"
        " kind=kLoop, calls=%fused_computation.4",
        # A replicated weight's gradient, used whole.
        f"  %all-reduce.5 = f32[32]{{0}} all-reduce(%reduce.5), {groups}",
        "  ROOT %tuple = (f32[32]{0}) tuple(%all-reduce.5)",
    ])
    ops = collectives.parse_collectives(text, [8], ["data"])
    assert [o["collective"] for o in ops] == [
        "reduce-scatter", "reduce-scatter", "all-reduce", "all-reduce",
        "all-reduce"]
    # The bytes a device takes part with stay the array reduced.
    assert [o["bytes"] for o in ops] == [64 * 32 * 2] + [64 * 32 * 4] * 3 + \
        [32 * 4]


def test_cpu_compiles_give_reduce_scatters_with_gpu_sized_temporaries():
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    from kerasmesh.cost.deadline import MEMORY_SCHEDULE
    from remat_models import CPU_OPTIONS

    mesh = Mesh(jax.devices()[:8], ("data",))
    split = NamedSharding(mesh, P("data", None))

    def step(ws, x):
        def loss(ws):
            h = x
            for w in ws:
                h = jnp.tanh(h @ w)
            return h.sum()
        return [w - 0.1 * g for w, g in zip(ws, jax.grad(loss)(ws))]

    ws = [jax.ShapeDtypeStruct((512, 512), jnp.float32, sharding=split)] * 6
    x = jax.ShapeDtypeStruct((8192, 512), jnp.float32, sharding=split)
    lowered = jax.jit(step, out_shardings=[split] * 6).lower(ws, x)
    merged = lowered.compile(compiler_options=MEMORY_SCHEDULE)
    apart = lowered.compile(compiler_options=CPU_OPTIONS)
    kinds = [o["collective"] for o in collectives.parse_collectives(
        apart.as_text(), [8], ["data"])]
    assert kinds.count("reduce-scatter") == 6
    assert "all-reduce" not in kinds
    # One merged all-reduce keeps the full-size gradients alive together.
    saved = merged.memory_analysis().temp_size_in_bytes - \
        apart.memory_analysis().temp_size_in_bytes
    assert saved > 512 * 512 * 4


GPU_STEP = """HloModule jit_step, is_scheduled=true

%ar_body (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%wrapped (p: f32[64,32]) -> f32[8,32] {
  %p = f32[64,32]{1,0} parameter(0)
  ROOT %rs = f32[8,32]{1,0} reduce-scatter(%p), replica_groups=[1,8]<=[8], dimensions={0}, to_apply=%ar_body
}

ENTRY %main (w: bf16[64,32], g: f32[64,32], h: bf16[512,32]) -> bf16[512,32] {
  %w = bf16[64,32]{1,0} parameter(0)
  %g = f32[64,32]{1,0} parameter(1)
  %h = bf16[512,32]{1,0} parameter(2)
  %ag = (bf16[64,32]{1,0}, bf16[512,32]{1,0}) all-gather-start(%w), replica_groups=[1,8]<=[8], dimensions={0}
  %agd = bf16[512,32]{1,0} all-gather-done(%ag)
  %rs = ((bf16[512,32]{1,0}, bf16[512,32]{1,0}), (bf16[64,32]{1,0}, bf16[64,32]{1,0})) reduce-scatter-start(%h, %agd), replica_groups=[1,8]<=[8], dimensions={0}, to_apply=%ar_body
  %rsd = (bf16[64,32]{1,0}, bf16[64,32]{1,0}) reduce-scatter-done(%rs)
  %ar = f32[16]{0} all-reduce-start(%x), replica_groups=[2,4]<=[8], to_apply=%ar_body
  %ard = f32[16]{0} all-reduce-done(%ar)
  %as = ((f32[64,32]{1,0}), f32[8,32]{1,0}) async-start(%g), calls=%wrapped
  %asd = f32[8,32]{1,0} async-done(%as)
  ROOT %out = bf16[512,32]{1,0} copy(%agd)
}
"""


def test_asynchronous_pairs_count_once_with_the_array_each_device_sends():
    ops = collectives.parse_collectives(GPU_STEP, [2, 4], ["data", "model"])
    assert [o["collective"] for o in ops] == [
        "all-gather", "reduce-scatter", "all-reduce", "reduce-scatter"]
    assert [o["instruction"] for o in ops] == ["ag", "rs", "ar", "as"]
    # The gathered array (not the shard with it); the arrays reduced (not
    # the parts kept); an all-reduce's result; a wrapped reduce-scatter's
    # operand.
    assert [o["bytes"] for o in ops] == [512 * 32 * 2, 2 * 512 * 32 * 2,
                                         16 * 4, 64 * 32 * 4]
    assert ops[1]["shapes"] == [[64, 32], [64, 32]]
    assert ops[0]["axes"] == ["data", "model"]
    assert ops[2]["axes"] == ["model"]


def test_a_collective_in_a_loop_counts_once_per_trip():
    text = "\n".join([
        "%body (p: (s32[], f32[8])) -> (s32[], f32[8]) {",
        "  %p = (s32[], f32[8]{0}) parameter(0)",
        "  %x = f32[8]{0} get-tuple-element(%p), index=1",
        "  %ar = f32[8]{0} all-reduce(%x), replica_groups=[1,8]<=[8], "
        "to_apply=%add",
        "  ROOT %t = (s32[], f32[8]{0}) tuple(%i, %ar)",
        "}",
        "ENTRY %main (a: f32[8]) -> f32[8] {",
        '  %w = (s32[], f32[8]{0}) while(%init), condition=%cond, '
        'body=%body, backend_config={"known_trip_count":{"n":"3"}}',
        "}"])
    ops = collectives.parse_collectives(text, [8], ["data"])
    assert len(ops) == 3 and all(o["bytes"] == 32 for o in ops)
    module = hlo.parse(text)
    # The loop's condition is not in the text: only what is, counted.
    assert collectives.execution_counts(module) == {"main": 1, "body": 3}
