"""Several processes: reading launchers' variables, the handshake and
connecting JAX's distributed runtime.
"""
