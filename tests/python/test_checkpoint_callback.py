"""The Keras callback that saves sharded checkpoints while a model trains."""

import numpy as np
import pytest

from checkpoint_models import build, data, distribution, values  # noqa: F401
from kerasmesh import checkpoint as ck
from kerasmesh.checkpoint_callback import callback
from kerasmesh.errors import KerasmeshError


@pytest.mark.parametrize("unit", ["batch", "", None, 1])
def test_a_unit_other_than_epoch_or_step_is_an_argument_error(tmp_path, unit):
    with pytest.raises(KerasmeshError) as info:
        callback(str(tmp_path), every=1, unit=unit)
    assert info.value.kind == "argument"
    assert info.value.bullets[0][1] == "Received {value}."


def test_callback_saves_every_n_steps_and_keeps_the_last(
        tmp_path, distribution):
    distribution((2, 4))
    model = build()
    x, y = data()
    cb = callback(str(tmp_path), every=2, unit="step", keep=2)
    model.fit(x, y, epochs=2, batch_size=16, shuffle=False, verbose=0,
              callbacks=[cb])
    assert cb.saved == [2, 4, 6, 8]
    info = ck.info(str(tmp_path))
    assert info["steps"]["step"] == [6, 8]
    assert info["epoch"] == 1
    # The saved step 8 is the model after training.
    fresh = build(seed=5)
    ck.restore(fresh, str(tmp_path))
    before, after = values(model), values(fresh)
    assert all(np.array_equal(before[k], after[k]) for k in before)


def test_callback_saves_every_epoch(tmp_path, distribution):
    distribution((2, 4))
    model = build()
    x, y = data()
    cb = callback(str(tmp_path), every=1, unit="epoch")
    model.fit(x, y, epochs=2, batch_size=16, shuffle=False, verbose=0,
              callbacks=[cb])
    info = ck.info(str(tmp_path))
    assert info["steps"]["step"] == [4, 8]
    assert info["epoch"] == 2
