"""A block's checkpointed call: the same loss, gradients and state as
without it, less memory, on keras-hub backbones and a plain Keras model."""

import numpy as np
import pytest

from remat_models import HUB, hub_backbone, hub_inputs, residual_blocks
from remat_models import train_step


def assert_same_step(a, b):
    assert a[0] == pytest.approx(b[0], rel=1e-6)
    assert len(a[1]) == len(b[1])
    for g, h in zip(a[1], b[1]):
        np.testing.assert_allclose(g, h, rtol=2e-4, atol=1e-6)
    for u, v in zip(a[2], b[2]):
        np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("family", sorted(HUB))
def test_hub_blocks_rematerialize_with_equal_loss_and_gradients(family):
    pytest.importorskip("keras_hub")
    model = hub_backbone(family)
    x = hub_inputs()
    steps = {c: train_step(model, x, c)
             for c in ("none", "save_matmuls", "full")}
    assert_same_step(steps["save_matmuls"], steps["none"])
    assert_same_step(steps["full"], steps["none"])
    # Gradients reach every weight of every block (they are the
    # checkpoint's inputs, not closed-over constants).
    in_blocks = {id(v) for b in model.transformer_layers
                 for v in b.trainable_variables}
    grads = [g for v, g in zip(model.trainable_variables, steps["full"][1])
             if id(v) in in_blocks]
    assert len(grads) == len(in_blocks) > 0
    assert all(np.abs(g).sum() > 0 for g in grads)
    # XLA's temporaries drop (which of the two keeps less depends on the
    # architecture and XLA's schedule: Gemma's full remat peaks higher).
    temp = {c: s[3] for c, s in steps.items()}
    assert temp["full"] < 0.8 * temp["none"]
    assert temp["save_matmuls"] < 0.8 * temp["none"]
    # Nothing stays on the layers.
    assert not any("call" in vars(b) for b in model.transformer_layers)


def test_dropout_state_and_masks_are_threaded_through_the_checkpoint():
    pytest.importorskip("keras_hub")
    model = hub_backbone("gemma", dropout=0.2)
    x = hub_inputs()
    x["padding_mask"][:, 48:] = 0
    none, full = train_step(model, x, "none"), train_step(model, x, "full")
    assert_same_step(full, none)
    # The seed generators advanced: their state is an output.
    assert len(none[2]) > 0


def test_plain_model_of_repeated_blocks_rematerializes():
    model = residual_blocks(dropout=0.25)
    x = np.random.default_rng(1).normal(size=(256, 32)).astype("float32")
    steps = {c: train_step(model, x, c)
             for c in ("none", "save_matmuls", "full")}
    assert_same_step(steps["full"], steps["none"])
    assert_same_step(steps["save_matmuls"], steps["none"])
    assert steps["full"][3] < steps["none"][3]


def test_a_remat_blended_over_the_blocks_trains_the_same_for_less():
    pytest.importorskip("keras_hub")
    from kerasmesh.remat.choice import blend

    model = hub_backbone("llama")
    x = hub_inputs()
    none = train_step(model, x, "none")
    blended = train_step(model, x, blend(1, 3))
    assert_same_step(blended, none)
    assert blended[3] < none[3]
    assert not any("call" in vars(b) for b in model.transformer_layers)


def test_losses_added_inside_a_block_reach_the_model():
    import jax

    model = residual_blocks(regularize=True)
    x = np.ones((8, 32), "float32")
    t = [v.value for v in model.trainable_variables]
    n = [v.value for v in model.non_trainable_variables]

    def losses(remat):
        from kerasmesh.remat.choice import remat_scope

        # Keras keeps the ids of losses traced while the functional model
        # was built, and a stateless call clears only its first layer's:
        # a new array with a reused id would count twice, with or without
        # remat. Clear them, as a call through __call__ would.
        model._clear_losses()
        with remat_scope(model, remat):
            out = jax.jit(lambda t, n: model.stateless_call(
                t, n, x, training=True, return_losses=True)[2])(t, n)
        return [float(v) for v in out]

    plain = losses("none")
    assert len(plain) == 3 and all(v > 0 for v in plain)
    # Again and again: a traced loss's id, reused by a later array, must
    # not make a layer count that array as its own loss too.
    for _ in range(8):
        assert losses("full") == pytest.approx(plain, rel=1e-6)


def test_an_eager_call_runs_the_blocks_own_call():
    from kerasmesh.remat.choice import set_remat

    model = residual_blocks()
    x = np.ones((2, 32), "float32")
    before = np.asarray(model(x))
    set_remat(model, "full")
    try:
        np.testing.assert_allclose(np.asarray(model(x)), before, rtol=1e-6)
    finally:
        set_remat(model, "none")
