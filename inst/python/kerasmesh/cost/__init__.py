"""What one training step costs: the step compiled shape-only by XLA,
its memory analysis and the collectives read from the HLO.
"""
