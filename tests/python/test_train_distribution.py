"""Distributions and the placement guard."""

import keras
import pytest

from kerasmesh import KerasmeshError
from kerasmesh.train.distribution import (data_parallel, get_distribution,
                                    model_parallel, set_distribution)
from kerasmesh.train.guard import check_placement
from kerasmesh.layout_map.rules import new_layout_map
from kerasmesh.mesh.device_mesh import device_mesh
from kerasmesh.report.sharding import variable_sharding


@pytest.fixture(scope="module")
def layout():
    mesh = device_mesh([2, 4], ["data", "model"])["mesh"]
    return new_layout_map(mesh, [".*kernel", ".*bias"],
                          [[None, "model"], ["model"]])["layout_map"]


def small_model():
    return keras.Sequential([keras.Input((8,)), keras.layers.Dense(4)])


def test_data_parallel_on_2d_mesh_avoids_keras_type_error(layout):
    dist = data_parallel(layout.device_mesh)
    assert dist["type"] == "data_parallel"
    assert dist["batch_dim_name"] == "data"
    assert dist["distribution"].num_model_replicas == 2


def test_mesh_and_devices_together_is_an_error(layout):
    with pytest.raises(KerasmeshError) as info:
        data_parallel(layout.device_mesh, ["cpu:0"])
    assert info.value.kind == "distribution_argument"


def test_batch_dim_name_must_be_a_mesh_axis(layout):
    with pytest.raises(KerasmeshError) as info:
        model_parallel(layout, "batch")
    assert info.value.kind == "batch_dim_name"
    assert model_parallel(layout)["batch_dim_name"] == "data"


def test_sharding_and_placement_guard(layout):
    dist = model_parallel(layout)["distribution"]
    outside = small_model()
    previous = set_distribution(dist)["previous"]
    try:
        inside = small_model()
        rows = variable_sharding(inside)
        assert rows["axes"][0] == [None, "model"]
        assert rows["spec"][0] == "PartitionSpec(None, 'model')"
        assert rows["device_bytes"][0] == rows["bytes"][0] / 4
        check_placement(inside)
        with pytest.raises(KerasmeshError) as info:
            outside.predict(keras.ops.ones((2, 8)), verbose=0)
        assert info.value.kind == "model_placement"
    finally:
        set_distribution(previous and previous["distribution"])


def test_set_distribution_describes_the_previous_one(layout):
    dist = model_parallel(layout)["distribution"]
    first = set_distribution(dist)
    try:
        assert first["set"] is True
        again = set_distribution(None)
        assert again["previous"]["distribution"] is dist
        assert again["previous"]["type"] == "model_parallel"
        assert get_distribution() is None
    finally:
        set_distribution(first["previous"] and
                         first["previous"]["distribution"])


def test_set_distribution_refuses_other_objects_and_changes_nothing(layout):
    dist = model_parallel(layout)["distribution"]
    set_distribution(dist)
    try:
        refused = set_distribution(layout)
        assert refused == {"set": False, "type": "layout_map"}
        assert set_distribution("dp") == {"set": False, "type": "other"}
        assert get_distribution()["distribution"] is dist
    finally:
        set_distribution(None)
