"""Sharded checkpoints: the files on disk, committing a step by rename,
matching saved arrays to a model, and the training callback.
"""
