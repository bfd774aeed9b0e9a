"""The one rewrite a report gets: sentences the verifier rejected go back to the writer with the
passages of the sources they cite and of the sources that fit them best (the writer may simply
have cited the wrong one); its answer is read back by claim id. Pure functions, no I/O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from deepresearch.llm_messages import RewriteDraft, RewriteItem, RewriteTask, SourceText, WriteTask
from deepresearch.policies.verification.citations import NUMERIC_MARKER
from deepresearch.policies.verification.support import Weights, support
from deepresearch.policies.verification.verify import Checked, Rewrite
from deepresearch.schemas import Evidence
from deepresearch.text.figures import missing_figures


def rewrite_task(
    query: str,
    checked: Checked,
    evidence: Mapping[str, Sequence[Evidence]],
    task: WriteTask,
    per_claim: int = 3,
) -> RewriteTask:
    """The failing sentences, each with its cited sources and the sources whose passages fit it
    best (the writer may have cited the wrong one); sources numbered as in the write task."""
    numbers = {s.url: s.n for s in task.sources}
    weights = Weights(ev.quote for evs in evidence.values() for ev in evs)
    wanted: set[str] = set()
    items: list[RewriteItem] = []
    for i in checked.failing():
        claim = checked.checks[i].claim
        ranked = sorted(
            (u for u in evidence if u in numbers),
            key=lambda u: (
                bool(missing_figures(claim.text, " ".join(e.quote for e in evidence[u]))),
                -support(claim.text, " ".join(e.quote for e in evidence[u]), weights).score,
                numbers[u],
            ),
        )
        wanted.update(claim.citations)
        wanted.update(ranked[:per_claim])
        nums = tuple(numbers[u] for u in claim.citations if u in numbers)
        items.append(RewriteItem(id=i, text=claim.text, sources=nums))
    sources = tuple(
        SourceText(
            n=s.n,
            url=s.url,
            title=s.title,
            location=s.location,
            text="\n\n".join(e.quote for e in evidence.get(s.url, ())),
            domain=s.domain,
        )
        for s in task.sources
        if s.url in wanted
    )
    return RewriteTask(query=query, claims=tuple(items), sources=sources)


def rewrites_from_draft(
    task: RewriteTask, draft: RewriteDraft
) -> tuple[dict[int, Rewrite], list[int]]:
    """The writer's rewrites by claim id (only ids it was asked about), and unknown source ids."""
    urls = {s.n: s.url for s in task.sources}
    asked = {c.id for c in task.claims}
    out: dict[int, Rewrite] = {}
    unknown: list[int] = []
    for item in draft.claims:
        if item.id not in asked or item.id in out:
            continue
        unknown += [n for n in item.sources if n not in urls]
        cited = tuple(dict.fromkeys(urls[n] for n in item.sources if n in urls))
        text = " ".join(NUMERIC_MARKER.sub("", item.text).split())
        out[item.id] = Rewrite(text, cited)
    return out, list(dict.fromkeys(unknown))
