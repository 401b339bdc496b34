"""Devices and device meshes: which devices JAX sees, and the meshes made
of them (`keras.distribution.DeviceMesh`, validated first).
"""
