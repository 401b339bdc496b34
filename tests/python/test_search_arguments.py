"""A search's arguments: classed errors for what can't be searched, the
settings of what can, and the machine a mesh's time is modeled on."""

import time
from types import SimpleNamespace

import pytest

from kerasmesh.core import kinds
from kerasmesh.core.errors import KerasmeshError
from kerasmesh.search.arguments import search_settings, timing_machine
from kerasmesh.search.tuning import PROFILE_SHARE
from kerasmesh.topology.time import rates
from small_models import mlp


def settings_of(mesh, **kw):
    """`search_settings()` of `mlp` on `mesh`, a batch of 16, `kw` for
    the rest."""
    args = dict(optimizer="sgd", loss="mse", input_shapes=None,
                memory=None, start=None, fixed=None, objective=None,
                bandwidth=None, flop_rate=None, blocks=None,
                batch_dim_name=None, timeout=60.0, began=time.monotonic(),
                remat=None, accumulation_steps=None, topology=None,
                cache_dir=None)
    args.update(kw)
    return search_settings(mlp, mesh, 16, **args)


def argument_error(mesh, **kw):
    with pytest.raises(KerasmeshError) as e:
        settings_of(mesh, **kw)
    assert e.value.kind == kinds.ARGUMENT
    return str(e.value)


def test_an_unknown_objective_is_an_argument_error(mesh):
    assert '`objective` must be "traffic" or "time"' in \
        argument_error(mesh, objective="speed")


@pytest.mark.parametrize("memory", [0, -1.0, "lots", [1e9]])
def test_a_memory_not_a_positive_number_is_an_argument_error(mesh, memory):
    assert "`memory` must be a positive number of bytes" in \
        argument_error(mesh, memory=memory)


@pytest.mark.parametrize("bandwidth", [
    None, {"data": 1e9}, {"data": 1e9, "model": 0},
    {"data": 1e9, "model": 1e9, "other": 1e9}])
def test_time_on_a_mesh_needs_a_bandwidth_per_axis(mesh, bandwidth):
    text = argument_error(mesh, objective="time", bandwidth=bandwidth,
                          flop_rate=1e12)
    assert "`bandwidth` must give bytes per second for each mesh axis" \
        in text and "The mesh's axes are data, model" in text


def test_a_bandwidth_for_other_axes_names_them(mesh):
    text = argument_error(mesh, objective="time", flop_rate=1e12,
                          bandwidth={"foo": 1e9, "model": 1e9})
    assert '"foo" is no axis of the mesh; "data" has no figure.' in text
    text = argument_error(mesh, objective="time", flop_rate=1e12,
                          bandwidth={"data": 1e9, "model": 1e9, "a": 1,
                                     "b": 2})
    assert '"a" and "b" are no axes of the mesh.' in text
    text = argument_error(mesh, objective="time", flop_rate=1e12,
                          bandwidth={"data": 1e9, "model": -1})
    assert "Received data = 1e+09, model = -1." in text


@pytest.mark.parametrize("flop_rate", [None, 0, "fast"])
def test_time_on_a_mesh_needs_a_flop_rate(mesh, flop_rate):
    assert "`flop_rate` must be a positive number of FLOPs per second" in \
        argument_error(mesh, objective="time", flop_rate=flop_rate,
                       bandwidth={"data": 1e9, "model": 1e9})


def test_traffic_needs_neither_bandwidth_nor_flop_rate(mesh):
    s, sp = settings_of(mesh, memory=1e9)
    assert s.objective == "traffic" and s.timing is None
    assert s.budget == 1e9 and s.blocks is None and list(s.models) == [None]
    assert [m.option.shape for m in sp.meshes] == [(2, 4)]


def test_device_memory_on_cpus_is_no_budget(mesh):
    s, _ = settings_of(mesh, memory="device")
    assert s.budget is None and s.fits(1e30)


def test_the_profile_gets_its_share_of_the_timeout(mesh):
    began = time.monotonic()
    s, _ = settings_of(mesh, began=began, timeout=100.0)
    assert s.end == began + 100.0
    assert s.profile_end == pytest.approx(began + PROFILE_SHARE * 100.0)


def test_time_on_a_mesh_is_modeled_on_a_machine_of_its_figures(mesh):
    s, _ = settings_of(mesh, objective="time", flop_rate=2e12,
                       bandwidth={"data": 1e9, "model": 4e9})
    assert s.objective == "time" and s.machine is None
    assert s.timing.axis_bandwidth == {"data": 1e9, "model": 4e9}


def test_the_timing_machine_is_one_node_at_the_given_rates():
    machine = timing_machine(SimpleNamespace(shape=(2, 4)),
                             {"data": 1e9, "model": 4e9}, 2e12)
    assert machine.devices == 8 and machine.nodes == 1
    r = rates(machine, "bfloat16", [0] * 8)
    assert r.matmul == 2e12 and r.attention == 2e12
    assert r.seconds("memory", 0.0, 1e12) == 0.0  # memory not timed

    def gather(axis):
        # 4 devices each send 3/4 of 4e9 bytes.
        return {"collective": "all-gather", "bytes": 4e9,
                "groups": [[0, 1, 2, 3]], "axes": [axis]}
    assert r.collective(gather("model")) == pytest.approx(3e9 / 4e9)
    assert r.collective(gather("data")) == pytest.approx(3e9 / 1e9)


def test_micro_batches_no_data_axis_splits_are_named_as_numbers(mesh):
    with pytest.raises(KerasmeshError) as e:
        settings_of(mesh, accumulation_steps=[16])
    assert e.value.kind == kinds.ACCUMULATION_STEPS
    assert "`accumulation_steps` 16 leave micro-batches" in str(e.value)
