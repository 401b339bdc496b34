"""What each operation of a compiled step computes and moves: FLOPs as
XLA's cost analysis counts them, every loop trip counted, products XLA
leaves to cuBLAS and cuDNN counted from their shapes."""

import jax
import jax.numpy as jnp
import pytest

from kerasmesh.cost import hlo, operations
from kerasmesh.cost.recompute import xla_flops

TRIPS, M, K, N = 6, 32, 64, 16
PRODUCT = 2 * M * K * N  # the FLOPs of one (M, K) @ (K, N)


def _mapped(xs, w):
    return jax.lax.map(lambda x: x @ w, xs)


def _nested(xs, w):
    return jax.lax.map(lambda x: jax.lax.map(lambda r: r @ w, x), xs)


def _args(*lead):
    return (jnp.ones(lead + (M, K), jnp.float32),
            jnp.ones((K, N), jnp.float32))


def _xla(compiled):
    analysis = compiled.cost_analysis()
    analysis = analysis[0] if isinstance(analysis, (list, tuple)) else \
        analysis
    return analysis["flops"]


def test_a_product_is_counted_as_xla_counts_it():
    compiled = jax.jit(lambda x, w: x @ w).lower(*_args()).compile()
    assert xla_flops(compiled) == pytest.approx(PRODUCT)
    assert xla_flops(compiled) == pytest.approx(_xla(compiled))


@pytest.mark.parametrize("stage", ["lowered", "compiled"])
def test_a_loop_counts_every_trip(stage):
    lowered = jax.jit(_mapped).lower(*_args(TRIPS))
    target = lowered if stage == "lowered" else lowered.compile()
    # XLA's own count has one trip; this one all of them.
    assert xla_flops(target) == pytest.approx(TRIPS * PRODUCT, rel=0.01)
    if stage == "compiled":
        assert _xla(target) == pytest.approx(PRODUCT, rel=0.05)


def test_nested_loops_multiply_their_trips():
    compiled = jax.jit(_nested).lower(*_args(TRIPS, 3)).compile()
    assert xla_flops(compiled) == pytest.approx(TRIPS * 3 * PRODUCT,
                                                rel=0.01)


def test_a_gradient_through_a_loop_counts_both_passes():
    def loss(xs, w):
        return jnp.sum(_mapped(xs, w) ** 2)

    compiled = jax.jit(jax.grad(loss, argnums=1)).lower(
        *_args(TRIPS)).compile()
    # Forward: one product a trip; backward: the weights' gradient, one
    # more a trip.
    assert xla_flops(compiled) == pytest.approx(2 * TRIPS * PRODUCT,
                                                rel=0.02)


def test_without_loops_the_count_is_xlas_own():
    # Products, arithmetic, comparisons, selects, conversions and
    # reductions, as XLA's cost analysis counts them.
    def loss(x, w):
        h = jax.nn.relu(x @ w).astype(jnp.bfloat16)
        return jnp.sum(jnp.maximum(h, 0.5) * 2 - 1)

    compiled = jax.jit(jax.value_and_grad(loss, argnums=1)).lower(
        *_args(TRIPS)).compile()
    assert xla_flops(compiled) == pytest.approx(_xla(compiled), rel=0.01)


def test_a_training_steps_count_is_xlas_own(mesh):
    # A Llama step on the 2 x 4 CPU mesh (no loops: float32 attention is
    # computed as written): the module's count equals XLA's within 0.1%.
    import keras
    from kerasmesh.cost import layout_cost as cost
    from remat_models import hub_backbone

    compiled = {}
    original = cost.compile_within

    def keep(lowered, *args):
        compiled["step"] = original(lowered, *args)
        return compiled["step"]

    lm = keras.distribution.LayoutMap(mesh)
    lm[".*feedforward_(intermediate|gate)_dense.kernel"] = ("data", "model")
    dist = keras.distribution.ModelParallel(layout_map=lm,
                                            batch_dim_name="data")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cost, "compile_within", keep)
        result = cost.layout_cost(lambda: hub_backbone("llama", 2), dist, 8,
                                  "adam", input_shapes={"token_ids": 32,
                                                        "padding_mask": 32})
    assert result["flops"] == pytest.approx(_xla(compiled["step"]),
                                            rel=1e-3)


LOOP = """HloModule m

%body (p: (s32[], f32[4,4])) -> (s32[], f32[4,4]) {
  %p = (s32[], f32[4,4]{1,0}) parameter(0)
  %a = f32[4,4]{1,0} get-tuple-element(%p), index=1
  %d = f32[4,4]{1,0} dot(%a, %a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %i = s32[] get-tuple-element(%p), index=0
  ROOT %t = (s32[], f32[4,4]{1,0}) tuple(%i, %d)
}

%cond (p: (s32[], f32[4,4])) -> pred[] {
  %p = (s32[], f32[4,4]{1,0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] parameter(1)
  ROOT %c = pred[] compare(%i, %n), direction=LT
}

ENTRY %main (x: f32[4,4]) -> (s32[], f32[4,4]) {
  %x = f32[4,4]{1,0} parameter(0)
  %z = s32[] constant(0)
  %t = (s32[], f32[4,4]{1,0}) tuple(%z, %x)
  ROOT %w = (s32[], f32[4,4]{1,0}) while(%t), condition=%cond, body=%body
}
"""


def test_a_loop_of_unknown_trips_counts_once():
    one = 2 * 4 * 4 * 4
    assert operations.step_flops(hlo.parse(LOOP)) == one
    counted = LOOP.replace("condition=%cond, body=%body",
                           'condition=%cond, body=%body, backend_config='
                           '{"known_trip_count":{"n":"5"}}')
    assert operations.step_flops(hlo.parse(counted)) == 5 * one


LIBRARY = """HloModule m, is_scheduled=true

ENTRY %main (a: bf16[2,4096,32,128], b: bf16[512,1024], c: bf16[1024,256]) -> bf16[2,32,4096,128] {
  %q = bf16[2,4096,32,128]{3,2,1,0} parameter(0)
  %b = bf16[512,1024]{1,0} parameter(1)
  %c = bf16[1024,256]{1,0} parameter(2)
  %gemm = (bf16[512,256]{1,0}, s8[4194304]{0}) custom-call(%b, %c), custom_call_target="__cublas$gemm", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}}
  %fwd = (bf16[2,32,4096,128]{3,1,2,0}, f32[2,32,4096]{2,1,0}, u8[0]{0}) custom-call(%q, %q, %q), custom_call_target="__cudnn$fmhaSoftmax", backend_config={"cudnn_fmha_backend_config": {"intermediate_tensor_shape": {"element_type": "BF16", "dimensions": ["2", "32", "4096", "4096"]}, "mask_type": "CAUSAL"}}
  %bwd = (bf16[2,32,4096,128]{3,1,2,0}, u8[0]{0}) custom-call(%q, %q, %q), custom_call_target="__cudnn$fmhaSoftmaxBackward", backend_config={"cudnn_fmha_backend_config": {"intermediate_tensor_shape": {"element_type": "BF16", "dimensions": ["2", "32", "4096", "4096"]}, "mask_type": "NO_MASK"}}
  ROOT %r = bf16[2,32,4096,128]{3,1,2,0} get-tuple-element(%fwd), index=0
}
"""


def test_library_calls_are_counted_from_their_shapes():
    module = hlo.parse(LIBRARY)
    entry = module.entry_computation
    ops = operations.Operations(module)
    gemm = ops.work(entry, entry.by_name["gemm"])
    assert gemm.flops == 2 * 512 * 256 * 1024
    assert gemm.kind == operations.MATMUL
    assert gemm.bytes == (512 * 1024 + 1024 * 256 + 512 * 256) * 2 + 4194304
    scores = 2 * 32 * 4096 * 4096
    fwd = ops.work(entry, entry.by_name["fwd"])
    assert fwd.kind == operations.ATTENTION
    assert fwd.flops == 4 * scores * 128 / 2  # causal: half the blocks
    bwd = ops.work(entry, entry.by_name["bwd"])
    assert bwd.flops == operations.BACKWARD_FACTOR * 4 * scores * 128
    assert ops.work(entry, entry.by_name["r"]).kind == operations.NONE
    assert operations.step_flops(module) == \
        gemm.flops + fwd.flops + bwd.flops


def test_attention_in_blocks_is_attentions_work():
    from kerasmesh.cost import attention

    q = jnp.ones((2, 2 * attention.BLOCK, 4, 8), jnp.bfloat16)
    compiled = jax.jit(attention.blocked_attention).lower(q, q, q).compile()
    module = hlo.parse(compiled.as_text())
    entry = module.entry_computation
    ops = operations.Operations(module)
    kinds = {ops.work(entry, i).kind for i in entry.instructions
             if i.opcode == "while"}
    assert kinds == {operations.ATTENTION}
