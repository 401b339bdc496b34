"""A DataParallel over a mesh of any rank."""

import keras

from kerasmesh.mesh.data_parallel import data_parallel_on


def mesh_of(shape, axes):
    return keras.distribution.DeviceMesh(shape, axes,
                                         keras.distribution.list_devices())


def test_a_mesh_of_two_axes_splits_the_batch_over_its_first():
    dist = data_parallel_on(mesh_of((2, 4), ("data", "model")),
                            auto_shard_dataset=False)
    assert isinstance(dist, keras.distribution.DataParallel)
    assert dist.batch_dim_name == "data"
    assert dist.num_model_replicas == 2
    assert dist.auto_shard_dataset is False


def test_a_mesh_of_one_axis_is_keras_own_data_parallel():
    dist = data_parallel_on(mesh_of((8,), ("batch",)))
    assert type(dist) is keras.distribution.DataParallel
    assert dist.batch_dim_name == "batch"
