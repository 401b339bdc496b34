"""`search_layout()`: the configuration that trains fastest and fits.

The search is one algorithm in three steps, profile, solve and verify,
each deterministic: the same inputs give the same configuration on any
machine and under any load; `timeout` only cuts it short, and the result
then says which figures it lacks.

1. **The space.** Meshes: the user's mesh, or on a topology every mesh of
   two axes, "data" (the batch axis) and "model", whose sizes multiply to
   the devices and whose data axis divides the batch, each in every device
   order that puts its groups in other nodes (`meshes.py`). Layouts, on
   each mesh (`families.py`): when the mesh's space of layouts is small
   (at most `tuning.EXHAUSTIVE`: every variable class's dimensions
   unsplit or on one mesh axis, `space.py`), all of them; otherwise the
   layouts people train with: data parallel (weights replicated), fully
   sharded (each weight split over the data axis), tensor parallel (each
   block's projections split over the model axis, Megatron's way) and
   both, and the user's `start`. `fixed` rules stand in every layout, and
   every layout keeps each block's output split over the batch axis
   (`plan/block_outputs.py`). Levers: the remat choices allowed, blends
   of two neighbouring choices over the blocks (the heavier on the first
   n blocks), and the micro-batch counts whose micro-batch the data axis
   splits.
2. **Bound.** A layout whose weights and optimizer state alone, at full
   depth, exceed the budget is dropped without a compile (the floor: the
   placements' bytes, `SLOT_SHARE` of the optimizer's).
3. **Profile** (`profile.py`). Each remaining (mesh, layout) is compiled,
   in a fixed order, at the fewest micro-batches: with `blocks`, at 1 and
   2 blocks for each remat choice; without, the model itself for each
   choice. A compile is XLA's, for the
   topology's GPUs where its GPU compiler is installed
   (`cost/target.py`), quick (the same memory and collectives); it keeps
   the step's memory, FLOPs, collectives and schedule (`figures.py`).
   Other remat choices are profiled only for layouts whose least time
   without remat could still beat the best configuration that fits
   (remat only adds time): the profile's size follows the problem, not
   the clock. Figures are kept in a cache on disk (`cache.py`), keyed by
   everything that decides them, so a repeated or changed search compiles
   only what it has not seen.
4. **Solve** (`solve.py`). Every configuration, mesh x device order x
   layout x remat (blends included) x micro-batches, is predicted from the
   profile: each figure at full depth on its remat choice's line through
   1 and 2 blocks (`f(L) = f(0) + L s`; a blend of n heavier blocks
   `max(f_heavy(0), f_light(0)) + n s_heavy + (L - n) s_light`: what a
   step holds once, such as the block's gathered weights "full"
   recomputes with, counts once); the batch's memory and temporaries scaled
   by the micro-batch (but a share of the temporaries that verification
   found not to shrink with it, 0 until then), an accumulator per
   trainable weight above one micro-batch; time by walking the compiled schedule with the
   topology's time model (`cost/schedule.py`, `topology/time.py`) in that
   device order, the operations and the activations' collectives scaled
   by the micro-batch, once per micro-batch. The objective is that time
   (on a mesh with `bandwidth` and `flop_rate`, the same model on a
   machine of those figures), or the bytes of the collectives; a layout
   XLA reshards by replicating tensors counts `RESHARD_PENALTY` slower.
   The best configuration is the least objective among those predicted
   to fit the budget, fewer levers first on a tie.
5. **Verify** (`verify.py`). The best configuration is compiled at full
   depth, as `layout_cost()` costs it; only that compile decides that it
   fits. A miss feeds back into the profile: at the micro-batch profiled,
   the bytes its remat choice lacked; at a smaller one, the share of the
   temporaries that does not shrink with the micro-batch that makes the
   prediction XLA's figure (for that layout, and the largest such share
   for every layout not verified), and the solve runs again. A fit's
   modeled time feeds back the same way (seconds a micro-batch's step
   lacked at the micro-batch profiled; else the share of its time that
   does not shrink with the micro-batch, the largest such share for every
   layout not verified); while the next best prediction promises less
   than the best verified configuration it is compiled too, up to
   `MAX_VERIFIED` compiles in all, and the best verified wins. Nothing
   verified is an error naming the least memory reached.

The result (`result.py`) names the configuration, its verified cost and
predicted figures, and why it won: what binds it (the budget, when faster
configurations do not fit; else the time) and, for each lever, the best
configuration that differs in it, with its time and memory.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from .arguments import search_settings
from .builds import check_paths_stable
from .profile import Profiler
from .result import result
from .solve import solve
from .verify import Verifier


def search_layout(model: Any, mesh: Any, batch_size: Any,
                  optimizer: Any = None, loss: Any = None,
                  input_shapes: dict | None = None, memory: Any = None,
                  start: Any = None, fixed: Any = None,
                  objective: str | None = None,
                  bandwidth: dict | None = None, flop_rate: Any = None,
                  blocks: int | None = None,
                  batch_dim_name: str | None = None, timeout: float = 600,
                  spent: float = 0, progress: Callable | None = None,
                  remat: Any = None, accumulation_steps: Any = None,
                  topology: Any = None, cache_dir: str | None = None) -> dict:
    """Search the configuration with the least time (or traffic) that fits.

    Args:
        model: a built model or a builder (with `blocks`, of one argument).
        mesh: a Keras DeviceMesh (its shape fixed), or None with a
            `topology` (R's plain values or a `Topology`): the search
            chooses the mesh.
        memory: bytes per device, "device" (the topology's, or JAX's
            smallest limit) or None; objective: "traffic", "time" or None
            ("time" with a topology); remat, accumulation_steps: the
            levers searched, None for all.
        cache_dir: where to keep profile figures, or None for no cache.
        Others as R's `search_layout()` and `cost.layout_cost()` say.

    Returns:
        Plain values: see `result.result()`.

    Raises:
        KerasmeshError: kinds `search_no_fit`, `topology_devices`,
            `remat_blocks`, `accumulation_steps`, `batch_size`,
            `search_fixed`, `search_builder`, `mesh_mismatch`,
            `batch_dim_name`, `timeout`, `argument`, and the cost's.
    """
    began = time.monotonic() - float(spent or 0)
    settings, space = search_settings(
        model, mesh, batch_size, optimizer, loss, input_shapes, memory,
        start, fixed, objective, bandwidth, flop_rate, blocks,
        batch_dim_name, float(timeout), began, remat, accumulation_steps,
        topology, cache_dir)
    profiler = Profiler(settings, space, progress)
    profiler.run()
    verifier = Verifier(settings, space, profiler)
    picked = verifier.pick(solve(settings, space, profiler),
                           lambda: solve(settings, space, profiler))
    found = result(settings, space, profiler, verifier, picked, began)
    check_paths_stable(model, settings.models, found["rules"],
                       settings.left())
    return found
