"""Which waiting sub-task a run host hands to the crew next, and to which researcher.

A crew researcher serves ``ray.crew.concurrency`` sub-tasks at once; calls beyond that wait in
Ray's queue at one researcher, first come first served, so a run whose sub-tasks landed behind a
busier researcher's queue waits while another researcher has room, and a run's later sub-tasks
queue behind every run's first ones only by the accident of when they were sent. The run host
keeps the waiting sub-tasks itself instead and hands one to a researcher only when it has a free
slot: the one whose run has had the fewest sub-tasks handed out so far (each run gets its share
of the crew, and a run that just arrived is not stuck behind older runs' later sub-tasks), in
arrival order among equals; the researcher is the least busy one (one being replaced last).
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Ticket:
    """A sub-task waiting for a slot; tickets order as they are served."""

    handed: int  # sub-tasks its run had handed to the crew before this one
    seq: int  # arrival order among the host's waiting sub-tasks


def pick_researcher(
    busy: Mapping[int, int], replaced: AbstractSet[int], researchers: int, capacity: int
) -> int | None:
    """The researcher with a free slot to serve a sub-task next (None: every slot is taken).
    ``capacity`` 0 means no limit (Ray queues what a researcher cannot start yet)."""
    free = [i for i in range(researchers) if not capacity or busy.get(i, 0) < capacity]
    if not free:
        return None
    return min(free, key=lambda i: (i in replaced, busy.get(i, 0), i))
