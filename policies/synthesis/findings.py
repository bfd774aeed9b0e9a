"""A researcher's findings from the model's draft, each with the evidence the verifier will check,
and the stand-in document for a page that could not be read. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Sequence

from deepresearch.llm_messages import FindingsDraft
from deepresearch.policies.verification.support import best_passage, locator
from deepresearch.schemas import Evidence, FetchedDoc, Finding, SearchHit


def from_draft(
    draft: FindingsDraft, docs: Sequence[FetchedDoc], quote_chars: int
) -> tuple[list[Finding], int]:
    """Findings citing the read documents by URL (the draft cites them by task number, 1-based in
    ``docs`` order); numbers that name no read document are dropped and counted."""
    by_number = {i + 1: d for i, d in enumerate(docs)}
    out: list[Finding] = []
    dropped = 0
    for item in draft.findings:
        cited = tuple(dict.fromkeys(by_number[n].url for n in item.sources if n in by_number))
        dropped += len(item.sources) - len(cited)
        if cited and item.text.strip():
            text = item.text.strip()
            evidence = tuple(evidence_for(text, d, quote_chars) for d in _docs_for(cited, docs))
            out.append(Finding(text=text, citations=cited, evidence=evidence, section=item.section))
    return out, dropped


def evidence_for(claim: str, doc: FetchedDoc, quote_chars: int) -> Evidence:
    """The passage of ``doc`` that best supports ``claim``, and where it is (a page, or a
    text-fragment link): what the citation verifier checks the report's sentences against."""
    quote = best_passage(claim, doc.text, quote_chars)
    return Evidence(url=doc.url, quote=quote, locator=locator(doc.url, doc.location, quote))


def _docs_for(urls: Sequence[str], docs: Sequence[FetchedDoc]) -> list[FetchedDoc]:
    by_url = {d.url: d for d in docs}
    return [by_url[u] for u in urls if u in by_url]


def snippet_doc(hit: SearchHit | None) -> FetchedDoc | None:
    """A page that could not be fetched or extracted falls back to its search snippet, marked as
    such in its title so the Sources list says what was actually read (corpus documents never)."""
    if hit is None or not hit.snippet.strip() or hit.url.startswith("doc:"):
        return None
    return FetchedDoc(
        url=hit.url,
        title=f"{hit.title} (search snippet only)",
        location=hit.url,
        text=hit.snippet,
        content_type="text/x-search-snippet",
        provider=hit.provider,
    )
