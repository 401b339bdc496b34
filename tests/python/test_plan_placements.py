"""A whole model placed under a layout map: variables and optimizer
variables matched by path, slots following their model variable."""

import keras

from kerasmesh.core.placer import Placer
from kerasmesh.plan.placements import (optimizer_placements, place_model,
                                       place_variables)
from kerasmesh.plan.slots import optimizer_variables


def model():
    return keras.Sequential([keras.Input((8,)), keras.layers.Dense(16)],
                            name="m")


def test_every_variable_is_placed_by_its_rule_and_found_by_path(
        mesh, layout_map):
    m = model()
    placed = place_model(m, layout_map(mesh, **{".*kernel": (None, "model")}))
    kernel, bias = m.variables
    assert placed.of(kernel).splits == (1, 4)
    assert placed.of(bias).copies == 8
    assert placed.by_path[kernel.path].rule == ".*kernel"
    assert placed.optimizer is None and placed.optimizer_variables == []


def test_slots_follow_their_variable_and_counters_the_layout_map(
        mesh, layout_map):
    m = model()
    lm = layout_map(mesh, **{".*kernel": (None, "model")})
    placed = place_model(m, lm, "adam")
    slots = [(v, p) for v, p, slot in placed.optimizer_variables if slot]
    others = [(v, p) for v, p, slot in placed.optimizer_variables
              if not slot]
    # Adam: a momentum and a velocity per trainable variable.
    assert len(slots) == 4
    for v, p in slots:
        if "kernel" in v.path:
            assert p.placement.splits == (1, 4) and p.rule == ".*kernel"
        assert p.placement.shape == tuple(v.shape)
    # The counters are looked up by their own path: no rule, replicated.
    assert others and all(p.rule is None and p.placement.copies == 8
                          for _, p in others)
    # Only lookups count as uses of a rule: the kernel, not its slots.
    assert [p.rule for p in placed.looked_up()].count(".*kernel") == 1


def test_a_slot_whose_variable_is_unknown_is_looked_up_by_its_path(
        mesh, layout_map):
    m = model()
    lm = layout_map(mesh, **{".*": (None,)})
    placer = Placer(lm)
    _, opt_vars = optimizer_variables("sgd", m, m.trainable_variables)
    empty = place_variables(placer, [])
    out = optimizer_placements(placer, [(v, m.variables[0])
                                        for v, _ in opt_vars], empty.by_path)
    assert all(not slot and p.rule == ".*" for _, p, slot in out)
