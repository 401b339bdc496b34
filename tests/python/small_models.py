"""Small models several test files cost."""

import keras


def mlp():
    """Dense 32 -> 64 (relu) -> 16, named so its paths never change."""
    inputs = keras.Input((32,))
    hidden = keras.layers.Dense(64, activation="relu", name="dense")(inputs)
    outputs = keras.layers.Dense(16, name="dense_1")(hidden)
    return keras.Model(inputs, outputs, name="mlp")
