"""Micro-batches of a global batch, and the optimizer that accumulates."""

import keras
import pytest
from hypothesis import given, strategies as st

from kerasmesh.core.errors import KerasmeshError
from kerasmesh.plan import accumulation as acc

from small_models import mlp


@given(batch=st.integers(1, 512), steps=st.integers(1, 64),
       ways=st.sampled_from([1, 2, 4, 8]))
def test_micro_batch_is_the_batch_over_steps_or_an_error(batch, steps, ways):
    if batch % steps or (steps > 1 and (batch // steps) % ways):
        with pytest.raises(KerasmeshError) as e:
            acc.micro_batch_size(batch, steps, ways, "data")
        assert e.value.kind == "accumulation_steps"
        assert str(batch) in str(e.value)
    else:
        assert acc.micro_batch_size(batch, steps, ways, "data") == \
            batch // steps


def test_the_error_lists_steps_that_work():
    with pytest.raises(KerasmeshError) as e:
        acc.micro_batch_size(64, 16, 8, "data")
    assert "`accumulation_steps` that work here: 1, 2, 4, 8." in str(e.value)
    with pytest.raises(KerasmeshError) as e:
        acc.micro_batch_size(12, 5)
    assert "Divisors of 12: 1, 2, 3, 4, 6, 12." in str(e.value)


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", None, True, 2**31])
def test_steps_must_be_a_positive_whole_number(bad):
    with pytest.raises(KerasmeshError) as e:
        acc.check_accumulation_steps(bad)
    assert e.value.kind == "accumulation_steps"


def test_the_optimizer_accumulates_as_many_steps():
    assert acc.accumulating_optimizer("adam", mlp(), 1) == "adam"
    opt = acc.accumulating_optimizer("adam", mlp(), 4)
    assert isinstance(opt, keras.optimizers.Adam)
    assert opt.gradient_accumulation_steps == 4
    mine = keras.optimizers.SGD(learning_rate=0.3,
                                gradient_accumulation_steps=3)
    one = acc.accumulating_optimizer(mine, mlp(), 1)
    assert one is not mine and one.gradient_accumulation_steps is None
    assert float(one.learning_rate) == pytest.approx(0.3)
    assert mine.gradient_accumulation_steps == 3
    compiled = mlp()
    compiled.compile(optimizer="rmsprop", loss="mse")
    assert isinstance(acc.accumulating_optimizer(None, compiled, 2),
                      keras.optimizers.RMSprop)


def test_no_steps_keeps_the_optimizers_own_accumulation():
    assert acc.accumulating_optimizer("adam", mlp(), None) == "adam"
    compiled = mlp()
    compiled.compile(optimizer=keras.optimizers.Adam(
        gradient_accumulation_steps=2), loss="mse")
    kept = acc.accumulating_optimizer(None, compiled, None)
    assert kept is not compiled.optimizer
    assert kept.gradient_accumulation_steps == 2
    assert acc.accumulating_optimizer(None, compiled, 1) \
        .gradient_accumulation_steps is None
