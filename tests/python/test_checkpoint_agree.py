"""Processes agreeing on a save from its background thread: process 0
commits only when every process wrote its part, and every process raises
when one failed."""

import threading

import pytest

from kerasmesh.checkpoint import agree
from kerasmesh.core.errors import KerasmeshError


class Store:
    """A key-value store as JAX's distributed client offers it."""

    def __init__(self):
        self.values, self.changed = {}, threading.Condition()

    def key_value_set(self, key, value):
        with self.changed:
            self.values[key] = value
            self.changed.notify_all()

    def blocking_key_value_get(self, key, timeout_ms):
        with self.changed:
            assert self.changed.wait_for(lambda: key in self.values,
                                         timeout_ms / 1000)
            return self.values[key]


def run_two(failures, commit=None):
    """Process 0 and 1 deciding at once; what each raised, and the records
    process 0 committed (with `commit`, what that raises instead)."""
    store, committed, raised = Store(), [], [None, None]

    def process(me):
        try:
            agree.decide("k", failures[me], {f"file{me}": {"size": me}},
                         commit or committed.append, run=(me, 2),
                         client=store)
        except BaseException as e:  # noqa: BLE001 - the test reads it
            raised[me] = e

    threads = [threading.Thread(target=process, args=(p,)) for p in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return raised, committed


def test_every_process_succeeding_commits_every_record_once():
    raised, committed = run_two([None, None])
    assert raised == [None, None]
    assert committed == [[{"file0": {"size": 0}}, {"file1": {"size": 1}}]]


@pytest.mark.parametrize("who", [0, 1])
def test_one_process_failing_commits_nothing_and_every_process_raises(who):
    failures = [None, None]
    failures[who] = OSError(28, "No space left on device")
    raised, committed = run_two(failures)
    assert committed == []
    assert raised[who] is failures[who]
    other = raised[1 - who]
    assert isinstance(other, KerasmeshError)
    assert other.kind == "checkpoint_write"
    assert "No space left on device" in str(other)


def test_a_commit_that_fails_in_process_0_is_raised_in_both():
    def refuse(records):
        raise OSError(5, "Input/output error")

    raised, _ = run_two([None, None], commit=refuse)
    assert isinstance(raised[0], OSError)
    assert "Input/output error" in str(raised[1])


def test_a_single_process_commits_its_own_record_or_raises():
    done = []
    agree.decide("k", None, {"a": 1}, done.append, run=(0, 1))
    assert done == [[{"a": 1}]]
    with pytest.raises(OSError):
        agree.decide("k", OSError("x"), {}, done.append, run=(0, 1))
    assert agree.next_key() != agree.next_key()
