"""Which waiting sub-task a run host hands to the crew next, and to which researcher.

A crew researcher serves ``ray.crew.concurrency`` sub-tasks at once; calls beyond that wait in
Ray's queue at one researcher, first come first served, so a run whose sub-tasks landed behind a
busier researcher's queue waits while another researcher has room, and a run's later sub-tasks
queue behind every run's first ones only by the accident of when they were sent. The run host
keeps the waiting sub-tasks itself instead and hands one to a researcher only when it has a free
slot: a run's first ``deep.max_parallel`` sub-tasks (its opening fan-out) before any run's later
ones, the run that has had the fewest handed out first, so a run that just arrived gets going at
once instead of waiting behind older runs' later sub-tasks; later sub-tasks first come, first
served, so runs finish in the order they got going, not all at once (32 runs ending together
queued 32 evaluations and reports on the same processes). The researcher is the least busy one
(one being replaced last).
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Ticket:
    """A sub-task waiting for a slot; tickets order as they are served."""

    rank: int  # ``rank``: its place in its run's opening fan-out, or after all of them
    seq: int  # arrival order among the host's waiting sub-tasks


def rank(handed: int, fan_out: int) -> int:
    """A sub-task's rank from the number its run handed out before it: the opening fan-out's
    in turn across runs, every later one alike (first come, first served)."""
    return min(handed, max(1, fan_out))


def pick_researcher(
    busy: Mapping[int, int], replaced: AbstractSet[int], researchers: int, capacity: int
) -> int | None:
    """The researcher with a free slot to serve a sub-task next (None: every slot is taken).
    ``capacity`` 0 means no limit (Ray queues what a researcher cannot start yet)."""
    with_room = [i for i in range(researchers) if not capacity or busy.get(i, 0) < capacity]
    if not with_room:
        return None
    return min(with_room, key=lambda i: (i in replaced, busy.get(i, 0), i))
