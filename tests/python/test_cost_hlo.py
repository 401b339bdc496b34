"""Reading XLA's HLO text: computations and instructions, loop trip counts
and name stacks."""

from kerasmesh.cost import hlo

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



COMPILED = """HloModule jit_f, is_scheduled=true, entry_computation_layout={()}

%fused_add (p0: f32[4,8], p1: f32[4,8]) -> f32[4,8] {
  %p0 = f32[4,8]{1,0} parameter(0)
  %p1 = f32[4,8]{1,0} parameter(1)
  ROOT %add.1 = f32[4,8]{1,0} add(%p0, %p1)
}

ENTRY %main (a: f32[4,8], b: f32[4,8]) -> (f32[4,8], bf16[2]) {
  %a = f32[4,8]{1,0} parameter(0), metadata={op_name="x"}
  %b = f32[4,8]{1,0} parameter(1)
  %fusion = f32[4,8]{1,0} fusion(%a, %b), kind=kLoop, calls=%fused_add, metadata={op_name="jit(f)/add"}
  %ag = (bf16[1]{0}, /*index=1*/bf16[2]{0}) all-gather-start(%c), dimensions={0}
  ROOT %t = (f32[4,8]{1,0}, bf16[2]{0}) tuple(%fusion, %ag)
}
"""


def test_a_module_reads_as_computations_of_instructions_in_order():
    module = hlo.parse(COMPILED)
    assert module.scheduled and module.entry == "main"
    assert list(module.computations) == ["fused_add", "main"]
    entry = module.entry_computation
    assert [i.name for i in entry.instructions] == ["a", "b", "fusion", "ag",
                                                    "t"]
    fusion = entry.by_name["fusion"]
    assert fusion.opcode == "fusion" and fusion.operands == ("a", "b")
    assert fusion.called == ["fused_add"]
    assert fusion.op_name == "jit(f)/add"
    assert entry.operand_arrays(fusion) == [[hlo.Array("f32", (4, 8))]] * 2
    # A tuple result keeps its structure; comments inside it are skipped.
    assert entry.by_name["ag"].result == (hlo.Array("bf16", (1,)),
                                          hlo.Array("bf16", (2,)))
    assert entry.root.name == "t"
    assert hlo.result_bytes(entry.by_name["t"].result) == 4 * 8 * 4 + 2 * 2


def test_lowered_text_names_operands_without_percent_signs():
    text = "\n".join([
        "ENTRY main.3 {",
        "  Arg_0.1 = f32[2,3]{1,0} parameter(0)",
        "  Arg_1.2 = f32[3,4]{1,0} parameter(1)",
        "  ROOT dot.3 = f32[2,4]{1,0} dot(Arg_0.1, Arg_1.2), "
        "lhs_contracting_dims={1}, rhs_contracting_dims={0}",
        "}"])
    entry = hlo.parse(text).entry_computation
    assert entry.by_name["dot.3"].operands == ("Arg_0.1", "Arg_1.2")
    assert entry.root.name == "dot.3"


def test_lines_outside_a_computation_are_one_entry():
    module = hlo.parse("  %x = f32[2]{0} negate(%y)")
    assert [i.name for i in module.entry_computation.instructions] == ["x"]


def test_a_loop_runs_its_known_trips_or_its_conditions_limit():
    known = hlo.parse("\n".join([
        "ENTRY %m () -> s32[] {",
        '  %w = (s32[]) while(%t), condition=%c, body=%b, '
        'backend_config={"known_trip_count":{"n":"6"}}',
        "}"]))
    loop = known.entry_computation.by_name["w"]
    assert hlo.loop_trips(known, loop) == 6
    lowered = hlo.parse("\n".join([
        "cond.1 {",
        "  p = (s32[]) parameter(0)",
        "  i = s32[] get-tuple-element(p), index=0",
        "  n = s32[] constant(5)",
        "  ROOT lt = pred[] compare(i, n), direction=LT",
        "}",
        "ENTRY main {",
        "  ROOT w = (s32[]) while(t), condition=cond.1, body=body.1",
        "}"]))
    loop = lowered.entry_computation.by_name["w"]
    assert hlo.loop_trips(lowered, loop) == 5
    silent = hlo.parse("ENTRY m {\n  ROOT w = (s32[]) while(t), "
                       "condition=none, body=b\n}")
    assert hlo.loop_trips(silent, silent.entry_computation.by_name["w"]) == 1
