"""Reading XLA's optimized HLO text: replica groups in their three forms,
collectives with their bytes and the mesh axes they run over."""

from kerasmesh.cost import hlo


def test_replica_groups_parse_in_all_three_forms():
    explicit = "replica_groups={{0,4},{1,5},{2,6},{3,7}}, use_global"
    iota = "replica_groups=[4,2]<=[2,4]T(1,0), use_global"
    meshed = "replica_groups=mesh['axis_0'=2,'axis_1'=4] {'axis_0'}, x"
    groups = [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert hlo.device_groups(explicit, 8) == groups
    assert hlo.device_groups(iota, 8) == groups
    assert hlo.device_groups(meshed, 8) == groups
    assert hlo.device_groups("replica_groups=[2,4]<=[8]", 8) == \
        [[0, 1, 2, 3], [4, 5, 6, 7]]
    # A sub-axis: the major half of 'axis_1' (size 4 = 2 x 2).
    sub = "replica_groups=mesh['axis_0'=2,'axis_1'=4] {'axis_1':(1)2}"
    assert hlo.device_groups(sub, 8) == [[0, 2], [1, 3], [4, 6], [5, 7]]
    assert hlo.group_axes(groups, [2, 4], ["data", "model"]) == ["data"]
    assert hlo.group_axes([[0, 1, 2, 3, 4, 5, 6, 7]], [2, 4],
                          ["data", "model"]) == ["data", "model"]


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
    ops = hlo.parse_collectives(text, [2, 4], ["data", "model"])
    assert [o["collective"] for o in ops] == ["all-reduce", "all-gather",
                                        "reduce-scatter",
                                        "collective-permute"]
    assert [o["bytes"] for o in ops] == [4 + 16 * 32 * 4, 8 * 64 * 2,
                                         4 * 8 * 4 * 4, 8]
    assert [o["axes"] for o in ops] == [["data"], ["model"], ["model"],
                                        ["model"]]
    summary = hlo.summarise_collectives(ops)
    assert summary["count"] == [1, 1, 1, 1]
    assert summary["bytes"][0] == max(o["bytes"] for o in ops)


def test_each_array_of_a_collective_gets_its_own_name_stack():
    # XLA writes a combined collective's names as prefix/(a:b:...).
    combined = (
        ' channel_id=3, replica_groups={}, metadata={op_name="jit(step)/'
        '(jvp()/reduce_sum:transpose(jvp(dense))/dot_general:'
        'transpose(jvp(dense))/reduce_sum)" stack_frame_id=39}')
    assert hlo.op_names(combined, 3) == [
        "jit(step)/jvp()/reduce_sum",
        "jit(step)/transpose(jvp(dense))/dot_general",
        "jit(step)/transpose(jvp(dense))/reduce_sum"]
    # Names that are not as many as the arrays: whose is which is unknown.
    assert hlo.op_names(combined, 2) == ["", ""]
    one = ' dimensions={1}, metadata={op_name="jit(step)/jvp(dense_1)/' \
        'dot_general" stack_frame_id=19}'
    assert hlo.op_names(one, 1) == ["jit(step)/jvp(dense_1)/dot_general"]
    assert hlo.op_names(one, 2) == ["jit(step)/jvp(dense_1)/dot_general"] * 2
    assert hlo.op_names(", dimensions={0}, use_global_device_ids=true",
                        2) == ["", ""]


def test_parsed_collectives_carry_one_name_per_result_array():
    line = ("  %all-reduce.8 = (f32[], f32[16,32]{1,0}) all-reduce(%a, %b), "
            "channel_id=3, replica_groups=[2,4]<=[8], to_apply=%add, "
            'metadata={op_name="jit(step)/(jvp()/reduce_sum:transpose('
            'jvp(dense))/dot_general)" stack_frame_id=39}')
    op, = hlo.parse_collectives(line, [2, 4], ["data", "model"])
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
    ops = hlo.parse_collectives(text, [8], ["data"])
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

    from kerasmesh.cost.deadline import MEMORY_SCHEDULE, compile_options

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
    apart = lowered.compile(compiler_options=compile_options())
    kinds = [o["collective"] for o in hlo.parse_collectives(
        apart.as_text(), [8], ["data"])]
    assert kinds.count("reduce-scatter") == 6
    assert "all-reduce" not in kinds
    # One merged all-reduce keeps the full-size gradients alive together.
    saved = merged.memory_analysis().temp_size_in_bytes - \
        apart.memory_analysis().temp_size_in_bytes
    assert saved > 512 * 512 * 4
