"""A compiled step's cost as plain values: memory, collectives, FLOPs and
what compiled it."""

from kerasmesh.cost import layout_cost as cost
from small_models import mlp
from test_cost_layout_cost import model_parallel


def test_memory_breakdown_adds_up_to_xla_figures(mesh):
    result = cost.layout_cost(mlp, model_parallel(mesh), 16, "adam", "mse")
    memory, xla = result["memory"], result["xla"]
    # XLA's arguments are the weights, optimizer state and batch.
    assert xla["argument"] == memory["weights"] + memory["optimizer"] + \
        memory["inputs"]
    # Device 0's part of the batch: 8 rows of 32 inputs and 16 targets.
    assert memory["inputs"] == 8 * (32 + 16) * 4
    assert memory["activations"] == xla["temp"]
    assert memory["total"] == xla["total"]


def test_the_cost_says_what_compiled_it_and_with_which_versions(mesh):
    import jax
    import keras

    result = cost.layout_cost(mlp, model_parallel(mesh), 16, "adam", "mse")
    assert result["compiled_for"] == {
        "label": "CPU (XLA CPU)", "kind": "cpu", "preset": None,
        "nearest": False, "compiler_missing": False}
    assert result["versions"]["keras"] == keras.__version__
    assert result["versions"]["jax"] == jax.__version__
    assert all("instruction" not in op for op in result["ops"])
