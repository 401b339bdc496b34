"""The Llama-3-70B-sized backbone of the 70B benchmarks (config only).

80 layers, hidden 8192, 64 query heads, 8 key/value heads, intermediate
28672, vocabulary 128256, bfloat16: about 70.6 billion parameters (141 GB).
"""

CONFIG = dict(vocabulary_size=128256, num_layers=80, num_query_heads=64,
              hidden_dim=8192, intermediate_dim=28672,
              num_key_value_heads=8, dtype="bfloat16")
MESH = (4, 8)
