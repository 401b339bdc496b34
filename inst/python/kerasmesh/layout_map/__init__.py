"""Layout maps: rules from variable paths to layouts, made, edited and
described for R (a Keras `LayoutMap` underneath). Looking a path up is
`core/resolve.py`'s, the one rule lookup.
"""
