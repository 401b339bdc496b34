"""The only layer R calls: one module per R topic, each re-exporting the
functions R names as "module.function" (plain values in and out).
`kerasmesh.call()` looks names up here and nowhere else.
"""
