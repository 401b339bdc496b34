"""The matrix products XLA's cost analysis leaves out of loops."""

import jax
import jax.numpy as jnp
import pytest

from kerasmesh.cost import loops
from kerasmesh.cost.loops import uncounted_flops
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


def test_no_loop_leaves_nothing_out():
    lowered = jax.jit(lambda x, w: x @ w).lower(*_args())
    assert uncounted_flops(lowered.compile().as_text()) == 0.0
    assert xla_flops(lowered.compile()) == pytest.approx(PRODUCT)


@pytest.mark.parametrize("stage", ["lowered", "compiled"])
def test_a_loop_counts_every_trip(stage):
    lowered = jax.jit(_mapped).lower(*_args(TRIPS))
    target = lowered if stage == "lowered" else lowered.compile()
    text = (target.as_text(dialect="hlo") if stage == "lowered"
            else target.as_text())
    assert uncounted_flops(text) == pytest.approx((TRIPS - 1) * PRODUCT,
                                                  rel=1e-3)
    # XLA's own count has one trip; with the rest, all of them.
    assert xla_flops(target) == pytest.approx(TRIPS * PRODUCT, rel=0.01)


def test_nested_loops_multiply_their_trips():
    compiled = jax.jit(_nested).lower(*_args(TRIPS, 3)).compile()
    assert xla_flops(compiled) == pytest.approx(TRIPS * 3 * M * 2 * K * N,
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


def test_a_loop_of_unknown_trips_counts_once():
    text = """HloModule m

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
    assert uncounted_flops(text) == 0.0
    counted = text.replace("condition=%cond, body=%body",
                           'condition=%cond, body=%body, backend_config='
                           '{"known_trip_count":{"n":"5"}}')
    assert uncounted_flops(counted) == 4 * 2 * 4 * 4 * 4


def test_the_operations_are_counted_as_xla_counts_them():
    # Without loops, the count read from the HLO is XLA's own: products,
    # arithmetic, comparisons, selects, conversions and reductions.
    def loss(x, w):
        h = jax.nn.relu(x @ w).astype(jnp.bfloat16)
        return jnp.sum(jnp.maximum(h, 0.5) * 2 - 1)

    compiled = jax.jit(jax.value_and_grad(loss, argnums=1)).lower(
        *_args(TRIPS)).compile()
    text = compiled.as_text()
    entry = loops._ENTRY.search(text).group("name")
    read = loops._flops(loops._parse(text), entry, False, {})
    assert read == pytest.approx(xla_flops(compiled), rel=0.01)
