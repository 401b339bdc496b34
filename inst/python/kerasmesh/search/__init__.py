"""Finding a layout: the search space (classes of variables and their
placements), the walk over it, costed by XLA compiles, and its result."""
