"""What an interrupted run had already done inside its unfinished sub-tasks, so a resume pays only
for the rest.

A researcher keeps a ``SearchRecord`` of its query plan and of each search result it used (the
run's ``searches.jsonl``); the pages it read are in ``docs.jsonl``. On resume the driver reads
both back: the pages seed the run's URL pool (no page is fetched twice), and each restarted
sub-task gets its ``PriorWork``: the same queries and, for the queries already run, the same
hits. So neither the model call that planned the queries nor those searches are paid again, and
the researcher goes on exactly as it would have. Pure: records in, work out.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, field

from deepresearch.policies.follow_up.reuse import keep_for_follow_up
from deepresearch.schemas import FetchedDoc, PriorWork, SearchRecord, SearchResult


@dataclass(frozen=True)
class ResumeWork:
    """What a resumed run starts from besides its checkpoint."""

    docs: tuple[FetchedDoc, ...] = ()  # pages read: they seed the URL pool
    prior: Mapping[str, PriorWork] = field(default_factory=dict)  # by sub-task id


def prior_work(
    records: Iterable[SearchRecord], completed: Container[str] = ()
) -> dict[str, PriorWork]:
    """Per unfinished sub-task id, what its records say it had done. Records of a run resumed
    more than once come from every session: the latest query plan and the latest result of
    each query win. An id that names another question than before (a delegated round planned
    again differently) starts over from its new records."""
    found: dict[str, tuple[str, tuple[str, ...], dict[str, SearchResult]]] = {}
    for record in records:
        if record.subtask in completed:
            continue
        question, queries, results = found.get(record.subtask, (record.question, (), {}))
        if record.question != question:
            question, queries, results = record.question, (), {}
        if record.queries:
            queries = record.queries
        if record.result is not None:
            results[record.result.query] = record.result
        found[record.subtask] = (question, queries, results)
    return {
        sid: PriorWork(question=question, queries=queries, results=tuple(results.values()))
        for sid, (question, queries, results) in found.items()
    }


def resume_work(
    docs: Iterable[FetchedDoc],
    records: Iterable[SearchRecord],
    completed: Container[str],
    doc_cap_chars: int,
) -> ResumeWork:
    """The pages and prior work a resume starts from. A page kept cut short (it reached the
    per-document cap of ``docs.jsonl``) is read again rather than reused shorter than it was."""
    complete_docs = tuple(d for d in docs if keep_for_follow_up(d) and len(d.text) < doc_cap_chars)
    return ResumeWork(complete_docs, prior_work(records, completed))
