"""Where a built model's weights live: the sharding table and the
per-shard picture.
"""
