"""Matching saved arrays to a model: names, shapes, dtypes, the mesh they
go onto, and the tree Orbax is asked to load."""

import jax
import numpy as np
import pytest
from orbax.checkpoint import v1 as ocp

from kerasmesh.checkpoint import variables as cv
from kerasmesh.core.errors import KerasmeshError


def test_mesh_that_cannot_hold_a_shape_is_reported():
    import jax
    from jax.sharding import NamedSharding, PartitionSpec

    mesh = jax.make_mesh((2, 4), ("data", "model"))
    saved = {"k": np.zeros((32, 10), "float32")}
    variables = {"k": saved["k"]}
    targets = {"k": NamedSharding(mesh, PartitionSpec(None, "model"))}
    with pytest.raises(KerasmeshError) as e:
        cv.check_capacity(saved, variables, targets)
    assert e.value.kind == "checkpoint_layout"
    assert '"k"' in e.value.message


def test_a_dtype_that_differs_names_the_variable_and_both_dtypes():
    saved = {"k": np.zeros((2, 3), "float32")}
    model = {"k": np.zeros((2, 3), "float16")}
    with pytest.raises(KerasmeshError) as e:
        cv.check_match(saved, model)
    assert e.value.kind == "checkpoint_dtype"
    assert '"k"' in e.value.message
    assert "Saved as float32; the model's is float16." in str(e.value)
    cv.check_match(saved, {"k": np.zeros((2, 3), "float32")})


def test_the_tree_to_load_keeps_empty_groups_and_skips_what_is_not_wanted():
    meta = {"trainable_variables": {"d": {"k": jax.ShapeDtypeStruct(
                (2,), "float32")}},
            "non_trainable_variables": {},
            "metrics_variables": {"loss": {"total": jax.ShapeDtypeStruct(
                (), "float32")}}}
    sharding = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    tree = cv.abstract_tree(meta, {"trainable_variables/d/k": "T/d/k"},
                            {"T/d/k": sharding})
    assert tree["non_trainable_variables"] == {}
    assert tree["metrics_variables"]["loss"]["total"] is ocp.PLACEHOLDER
    leaf = tree["trainable_variables"]["d"]["k"]
    assert leaf.shape == (2,) and leaf.sharding == sharding
