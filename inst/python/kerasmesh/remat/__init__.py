"""Rematerialization per block: which layers are blocks (`blocks.py`), the
checkpointed call of one block (`checkpoint.py`), and applying a choice to
a model, for good or for one step (`choice.py`)."""
