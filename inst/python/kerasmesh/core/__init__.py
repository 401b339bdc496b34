"""What every topic shares: errors and condition kinds, argument checks,
the backend, devices, meshes, layouts, rule matching and placement.
"""
