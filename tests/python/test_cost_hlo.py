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
