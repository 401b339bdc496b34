"""Every tuning constant of the search, with the reason for its value.

`pipeline.py` states the algorithm these serve; nothing else in
`search/` holds a number that changes which configuration the search
finds (the cache's size, `cache.py`, changes only how fast).
"""

# A layout space of at most this many layouts (per mesh) is profiled
# whole: every layout of its classes, instead of the structured layouts.
# A five-layer MLP's 7 to 60 layouts take seconds to compile; the first
# transformer's space (18,666 layouts for a five-layer MLP of one-axis
# choices per dimension) does not.
EXHAUSTIVE = 64

# The floor under a candidate's memory counts this share of the
# optimizer's bytes per weight byte: slots in another dtype than their
# variable's (Adam's float32 slots of bfloat16 weights) make the ratio
# approximate, and the floor must stay under XLA's total.
SLOT_SHARE = 0.9

# Full-depth compiles at most, misses of the budget and fits whose time
# lets another promise less together: each corrects the figures it was
# predicted from (`verify.py`), so the next candidate is predicted
# better; a 70B step compiles in three to eight minutes on a 2-core
# machine, which bounds how many a search can afford.
MAX_VERIFIED = 3

# A layout XLA reshards by replicating tensors holds and moves more than
# its collectives say (XLA's "involuntary full rematerialization"); its
# time is raised by this share so that a clean layout of nearly the same
# time wins.
RESHARD_PENALTY = 0.1

# How far an extrapolated figure may be off the full-depth compile's
# before the result says so (memory and traffic are linear in the blocks
# for transformers; a model whose blocks differ is not).
LINEAR_WITHIN = 0.05

# The share of `timeout` the profile may use; the rest is the full-depth
# verification's, whose one compile takes about as long as the profile's
# reduced-depth compiles together.
PROFILE_SHARE = 0.6
