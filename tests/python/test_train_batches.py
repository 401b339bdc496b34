"""The batches a training or inference call feeds, read from its
arguments as Keras binds them."""

import keras
import numpy as np
import pytest

from kerasmesh.train.batches import Feed, call_feeds


@pytest.fixture(scope="module")
def model():
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])


def feeds(model, name, *args, **kwargs):
    return call_feeds(name, args, kwargs, model=model)


X, Y = np.zeros((100, 4), "float32"), np.zeros((100, 2), "float32")


def test_fit_feeds_the_data_at_its_batch_size_or_keras_default(model):
    assert feeds(model, "fit", X, Y, 16) == [Feed("the training data", 16, 100)]
    assert feeds(model, "fit", X, Y) == [Feed("the training data", 32, 100)]
    assert feeds(model, "fit", x=X, y=Y, batch_size=20) == \
        [Feed("the training data", 20, 100)]


def test_a_validation_split_is_keras_own_split(model):
    train, val = feeds(model, "fit", X, Y, batch_size=16,
                       validation_split=0.2)
    assert train == Feed("the training data", 16, 80)
    assert val == Feed("the validation split (0.2)", 16, 20)
    # Keras floors the training part: 0.25 of 99 leaves 74 and 25.
    train, val = feeds(model, "fit", X[:99], Y[:99], validation_split=0.25)
    assert (train.samples, val.samples) == (74, 25)


def test_validation_data_has_its_own_count_and_batch_size(model):
    xv, yv = np.zeros((30, 4)), np.zeros((30, 2))
    train, val = feeds(model, "fit", X, Y, batch_size=16,
                       validation_data=(xv, yv), validation_batch_size=10)
    assert train == Feed("the training data", 16, 100)
    assert val == Feed("the validation data", 10, 30,
                       "validation_batch_size")
    # validation_data wins over validation_split, as in Keras.
    _, val = feeds(model, "fit", X, Y, validation_split=0.5,
                   validation_data=[xv, yv])
    assert val == Feed("the validation data", 32, 30)


def test_steps_leave_the_sample_count_unknown(model):
    [f] = feeds(model, "fit", X, Y, 16, steps_per_epoch=2)
    assert f.samples is None
    _, val = feeds(model, "fit", X, Y, validation_split=0.2,
                   validation_steps=1)
    assert val.samples is None
    assert feeds(model, "predict", X, 16, steps=1)[0].samples is None


def test_evaluate_predict_and_on_batch_calls(model):
    assert feeds(model, "evaluate", X, Y, 16) == \
        [Feed("the data to evaluate", 16, 100)]
    assert feeds(model, "predict", X) == [Feed("the data to predict", 32, 100)]
    assert feeds(model, "predict", {"a": X}) == \
        [Feed("the data to predict", 32, 100)]
    assert feeds(model, "train_on_batch", X[:3], Y[:3]) == \
        [Feed("the batch", 3, None)]


def test_datasets_and_calls_that_do_not_bind_feed_nothing(model):
    assert feeds(model, "fit", iter([X]), batch_size=16) == []
    assert feeds(model, "fit", X, nonsense=1) == []
    assert feeds(model, "predict", None) == []
