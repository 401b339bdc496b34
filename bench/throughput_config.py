"""The model and data sizes both throughput benchmarks use."""

INPUTS = 512
HIDDEN = 2048
OUTPUTS = 512
BATCH = 256
EPOCH_STEPS = 16
