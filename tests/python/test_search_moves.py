"""The walk's moves: tied moves split one size everywhere, class moves
change one class, and the tensor-parallel start keeps the width whole."""

import keras

from kerasmesh.search import moves
from kerasmesh.search.space import SearchSpace


def block_mlp():
    """Two blocks of a 32-wide MLP with a 64-wide hidden layer and a
    norm: 32 is the width most classes share."""
    x = inputs = keras.Input((32,))
    for i in range(2):
        x = keras.layers.LayerNormalization(name=f"norm_{i}")(x)
        h = keras.layers.Dense(64, use_bias=False, name=f"up_{i}")(x)
        x = keras.layers.Dense(32, use_bias=False, name=f"down_{i}")(h)
    return keras.Model(inputs, x)


def placements(space, choice):
    """The kernels' placements (the norms never split here)."""
    return {c.template: a for c, a in zip(space.classes, space.axes(choice))
            if c.template.endswith("kernel")}


def test_a_tied_move_puts_one_size_on_one_axis_in_every_class(mesh):
    space = SearchSpace(block_mlp(), mesh)
    unsplit = tuple([0] * len(space.classes))
    tied = moves.tied_moves(space, unsplit)
    hidden_on_model = {"up_#/kernel": (None, "model"),
                       "down_#/kernel": ("model", None)}
    assert hidden_on_model in [placements(space, c) for c in tied]
    assert unsplit not in tied and len(set(tied)) == len(tied)


def test_class_moves_change_one_class_each(mesh):
    space = SearchSpace(block_mlp(), mesh)
    unsplit = tuple([0] * len(space.classes))
    for c in moves.class_moves(space, unsplit):
        assert sum(a != b for a, b in zip(c, unsplit)) == 1
    assert len(moves.class_moves(space, unsplit)) == \
        sum(len(c.options) - 1 for c in space.classes)


def test_the_tensor_parallel_start_splits_the_hidden_width_only(mesh):
    space = SearchSpace(block_mlp(), mesh)
    start = moves.tensor_parallel(space, tuple([0] * len(space.classes)),
                                  "model")
    assert placements(space, start) == {"up_#/kernel": (None, "model"),
                                        "down_#/kernel": ("model", None)}


def test_ordered_moves_split_less_first_while_the_layout_fits(mesh):
    space = SearchSpace(block_mlp(), mesh)
    start = moves.tensor_parallel(space, tuple([0] * len(space.classes)),
                                  "model")
    around = moves.class_moves(space, start)
    now = moves.split_bytes(space, start)
    fitting = moves.ordered(space, True, start, around)
    assert moves.split_bytes(space, fitting[0]) < now
    breaking = moves.ordered(space, False, start, around)
    assert moves.split_bytes(space, breaking[0]) > now
