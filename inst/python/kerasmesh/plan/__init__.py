"""Pre-flight planning: placing a model's variables (and optimizer slots,
layer outputs, batches) under a layout without allocating, and the
problems found.
"""
