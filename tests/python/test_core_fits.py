"""One definition of "fits": the bytes a device needs against its memory."""

import pytest

from kerasmesh.core import fits

XLA = {"argument": 100.0, "output": 40.0, "alias": 30.0, "temp": 25.0}


def test_a_compiled_step_needs_xlas_total():
    assert fits.xla_total(XLA) == 135.0
    assert fits.need(XLA) == 135.0
    # XLA's figure decides even beside a plan's.
    assert fits.need(XLA, plan_total=1.0) == 135.0


def test_a_plan_needs_its_total_per_device():
    assert fits.need(plan_total=64) == 64.0
    with pytest.raises(ValueError):
        fits.need()


def test_a_layout_fits_when_it_needs_at_most_the_memory():
    assert fits.fits(135.0, 135.0) is True
    assert fits.fits(135.0, 134.9) is False
    assert fits.fits(135.0, None) is None


def test_a_cost_report_carries_what_it_needs(mesh):
    import keras

    from kerasmesh.cost.layout_cost import layout_cost
    from small_models import mlp

    mp = keras.distribution.ModelParallel(
        layout_map=keras.distribution.LayoutMap(mesh))
    r = layout_cost(mlp, mp, 16, "adam", "mse")
    assert r["need"] == fits.xla_total(r["xla"]) == r["xla"]["total"]
