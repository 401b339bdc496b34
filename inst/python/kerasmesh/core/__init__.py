"""What every topic shares: errors and condition kinds, argument checks,
the backend, the text of messages, rule matching and lookup, placement
and what goes wrong with it, and shape-only builds.
"""
