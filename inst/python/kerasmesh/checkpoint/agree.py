"""Processes of a run agreeing on a save from its background thread.

Device collectives belong to the training thread, so a save's background
part talks through JAX's distributed key-value store instead (what Orbax's
own background commit uses): every process reports whether it wrote and
hashed its files, with its record; process 0 commits the step only when
every one did, and reports its verdict, which every process waits for.
So the step is swapped in only when all wrote it, and every process of the
run raises when one failed.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from ..core.errors import KerasmeshError
from ..core import kinds

# How long a process waits for the others' reports and for the verdict,
# in milliseconds: they come once every process's write has ended, which
# Orbax's own commit already waited for.
WAIT_MS = 600_000
_SERIAL = [0]  # saves started in this process, the same in every process


def next_key() -> str:
    """A key for one save, the same in every process (every process saves
    in the same order)."""
    _SERIAL[0] += 1
    return f"kerasmesh_checkpoint/{_SERIAL[0]}"


def _client():
    from jax._src import distributed

    return distributed.global_state.client


def decide(key: str, failure: BaseException | None, record: dict,
           commit: Callable[[list[dict]], None], run: tuple | None = None,
           client=None) -> None:
    """Commit with every process's record (process 0), once every process
    reported success; raise in every process when one failed.

    `failure`: this process's error writing or hashing, or None. `run`:
    (this process's index, the number of processes), JAX's by default;
    `client`: the key-value store, JAX's by default.
    """
    if run is None:
        import jax

        run = (jax.process_index(), jax.process_count())
    me, processes = run
    if processes == 1:
        if failure is not None:
            raise failure
        commit([record])
        return
    client = client or _client()
    client.key_value_set(f"{key}/{me}", json.dumps({
        "ok": failure is None, "record": record,
        "error": None if failure is None else str(failure)}))
    if me == 0:
        _commit_as_0(client, key, processes, failure, commit)
        return
    verdict = client.blocking_key_value_get(f"{key}/verdict", WAIT_MS)
    if failure is not None:
        raise failure
    if verdict != "ok":
        raise KerasmeshError(
            kinds.CHECKPOINT_WRITE, "The step must be written completely.",
            x=f"Process 0 did not commit it: {verdict}",
            i="The steps saved before are unchanged.")


def _commit_as_0(client, key: str, processes: int,
                 failure: BaseException | None,
                 commit: Callable[[list[dict]], None]) -> None:
    """Process 0's part: gather the reports, commit, publish the verdict."""
    reports = [json.loads(client.blocking_key_value_get(f"{key}/{p}",
                                                        WAIT_MS))
               for p in range(processes)]
    failed = [f"process {p}: {r['error']}" for p, r in enumerate(reports)
              if not r["ok"]]
    error: BaseException | None = failure
    if failed and error is None:
        error = KerasmeshError(
            kinds.CHECKPOINT_WRITE, "The step must be written completely.",
            x="Another process of the run failed to write it: " +
              "; ".join(failed) + ".",
            i="The steps saved before are unchanged.")
    if error is None:
        try:
            commit([r["record"] for r in reports])
        except BaseException as e:  # noqa: BLE001 - published, then raised
            error = e
    client.key_value_set(f"{key}/verdict",
                         "ok" if error is None else str(error))
    if error is not None:
        raise error
