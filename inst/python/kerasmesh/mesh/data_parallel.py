"""A Keras DataParallel over a mesh of any rank: what `data_parallel()`
builds and what a cost moves onto a compile-only GPU topology."""

from __future__ import annotations

from typing import Any


def _mesh_data_parallel_class():
    """DataParallel that accepts a mesh of any rank.

    Keras 3.15's DataParallel raises `TypeError: category must be a Warning
    subclass` on a mesh of rank > 1 (an int is passed as the warning
    category). The intended behaviour, per its docstring: the batch is split
    over the mesh's first axis and variables are replicated. R warns.
    """
    from keras.distribution import DataParallel
    from keras.src.distribution.distribution_lib import Distribution

    class MeshDataParallel(DataParallel):
        def _initialize_with_device_mesh(self, device_mesh,
                                         auto_shard_dataset):
            Distribution.__init__(self, device_mesh,
                                  device_mesh.axis_names[0],
                                  auto_shard_dataset)

        @property
        def num_model_replicas(self):
            return int(self.device_mesh.shape[0])

    return MeshDataParallel


def data_parallel_on(mesh: Any, auto_shard_dataset: bool = True) -> Any:
    """A DataParallel over `mesh`, of any rank (`_mesh_data_parallel_class`
    past rank 1)."""
    import keras

    cls = _mesh_data_parallel_class() if len(mesh.shape) > 1 else \
        keras.distribution.DataParallel
    return cls(device_mesh=mesh, auto_shard_dataset=auto_shard_dataset)
