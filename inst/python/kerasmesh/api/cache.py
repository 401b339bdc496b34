"""What R calls as "cache.<function>" (no Keras or JAX needed)."""

from ..search.cache import clear as clear_search_cache

__all__ = [
    "clear_search_cache",
]
