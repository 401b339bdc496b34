"""Arrays across the R/Python border: R values as NumPy arrays of a
checked dtype, and a model's variable values back as flat lists.
"""
