"""Every message that crosses an actor boundary, in one versioned place (what a model role is
asked and answers is in ``llm_messages``).

Models are frozen and forbid unknown fields so a typo in a producer fails loudly at the boundary
instead of silently dropping data. Citations inside a run refer to sources by their normalized URL /
document id; numbers are assigned only when a report is rendered.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

SCHEMA_VERSION = 1

Mode = Literal["quick", "deep"]
Role = Literal["planner", "researcher", "evaluator", "writer"]
RunStatus = Literal["running", "completed", "no_answer", "interrupted", "failed"]


class Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# --------------------------------------------------------------------------- run and plan


class Request(Message):
    """What the user asked for; the run's identity."""

    run_id: str
    query: str
    mode: Mode = "quick"
    created_at: float = 0.0
    follow_up: str | None = None  # the earlier run this one follows up (``--follow-up RUN_ID``)
    plan: tuple[str, ...] = ()  # a user-fixed agenda (deep mode): researched instead of planning


class SubTask(Message):
    id: str
    question: str
    round: int = 1


class SearchHit(Message):
    """One search result. ``url`` is a normalized URL or a corpus document id (``doc:<path>#page=N``)."""

    url: str
    title: str
    snippet: str = ""
    provider: str
    rank: int
    location: str = ""  # human-readable place: "2023 Q3 AAPL.pdf, p. 4" or the URL


class Source(Message):
    """A document that was actually fetched and read in this run."""

    url: str
    title: str
    location: str
    provider: str = ""
    cited_at: tuple[str, ...] = ()  # the passage locations cited: "p. 4", a text-fragment URL
    by: str = ""  # who the document is by, as its cover says ("Apple Inc."); "" when unknown
    domain: str = "generic"  # the kind of document its content is (``deepresearch.domains``)

    @property
    def label(self) -> str:
        """The title a reader and a writer see: a file's name names no company, its cover may."""
        return f"{self.title} ({self.by})" if self.by else self.title


class FetchedDoc(Message):
    """The text of a fetched URL or corpus document, as cached by the UrlPool."""

    url: str
    title: str
    location: str
    text: str
    content_type: str = "text/plain"
    provider: str = ""
    by: str = ""  # who the document is by, from its cover (corpus documents); see ``Source.by``
    domain: str = "generic"  # the kind of document its content is (``deepresearch.domains``)

    def source(self) -> Source:
        return Source(
            url=self.url,
            title=self.title,
            location=self.location,
            provider=self.provider,
            by=self.by,
            domain=self.domain,
        )


# --------------------------------------------------------------------------- usage


class Usage(Message):
    """Model calls (each one the server saw, invalid replies included) and their tokens; the
    model-free steps apart (``extractive_steps``: no tokens, no cost); ``unpriced``: models used
    that ``llm.prices`` has no price for (their cost is not in ``cost_usd``)."""

    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    search_calls: int = 0
    fetches: int = 0
    estimated_tokens: bool = False
    extractive_steps: int = 0
    unpriced: tuple[str, ...] = ()

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            llm_calls=self.llm_calls + other.llm_calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cost_usd=round(self.cost_usd + other.cost_usd, 6),
            search_calls=self.search_calls + other.search_calls,
            fetches=self.fetches + other.fetches,
            estimated_tokens=self.estimated_tokens or other.estimated_tokens,
            extractive_steps=self.extractive_steps + other.extractive_steps,
            unpriced=tuple(sorted({*self.unpriced, *other.unpriced})),
        )


# --------------------------------------------------------------------------- research results


class Evidence(Message):
    """The passage of a read source that supports a claim, and where it is in that source.

    ``locator`` is ``"p. 4"`` (a page of a paged corpus document), a text-fragment URL
    (``url#:~:text=start,end``) for a web page, or empty when the source has no finer place.
    """

    url: str
    quote: str
    locator: str = ""


class Finding(Message):
    """One claim and the sources (normalized URLs / document ids) that support it."""

    text: str
    citations: tuple[str, ...]
    evidence: tuple[Evidence, ...] = ()  # per cited source, the passage that supports the claim
    # the headings above it in its source: what a sentence that never names its topic is about
    # ("The complaint alleges ... Patent Nos. 7,814,170" under "Legal Proceedings")
    section: str = ""


class ResearcherReport(Message):
    subtask_id: str
    question: str
    status: Literal["ok", "failed"] = "ok"
    summary: str = ""
    findings: tuple[Finding, ...] = ()
    sources: tuple[Source, ...] = ()
    error: str = ""
    usage: Usage = Usage()
    search_degraded: bool = False
    answered_by: tuple[str, ...] = ()  # the LLM provider tiers that answered its calls
    fell_back: tuple[str, ...] = ()  # the first of its calls that fell to a later tier, and why
    queries: tuple[str, ...] = ()  # every search query it ran, reformulations included
    hits_found: int = 0  # distinct hits its searches returned
    hits_filtered: int = 0  # hits not fetched: below the source-scoring thresholds
    findings_filtered: int = 0  # findings dropped as not about its question
    authors_read: tuple[str, ...] = ()  # who the documents read are by, as their covers say
    sources_read: int = 0  # documents fetched and read, cited or not
    claims_dropped: int = (
        0  # the model's findings dropped: a bogus citation, unsupported, off topic
    )
    model_unavailable: bool = False  # failed because no model tier answered (not the sources)


class Evaluation(Message):
    action: Literal["synthesize", "delegate"]
    reason: str = ""
    new_subtasks: tuple[str, ...] = ()


class ReportSection(Message):
    heading: str
    findings: tuple[Finding, ...]


class Report(Message):
    """The final report before rendering: citations still by URL, numbered by ``render``."""

    query: str
    title: str
    answer: str
    sections: tuple[ReportSection, ...]
    sources: tuple[Source, ...]
    answer_citations: tuple[str, ...] = ()  # URLs backing the answer, rendered as [n] after it
    limits: tuple[str, ...] = ()  # "gaps and limits": which limit ended the run, what failed
    notes: tuple[str, ...] = ()  # e.g. "written without a language model", "search was limited"
    status: Literal["completed", "no_answer"] = "completed"
    verification: Verification | None = None  # citation check counts (None: not verified)


class Verification(Message):
    """What the citation verifier did to the writer's draft (shown in the report footer)."""

    claims: int = 0  # sentences checked (answer and findings)
    cited: int = 0  # of those, sentences that carried a citation of a read source
    verified: int = 0  # cited sentences whose cited passage supported them as drafted
    rewritten: int = 0  # unsupported sentences the writer rewrote into supported ones
    dropped: int = 0  # unsupported sentences removed from the report
    removed_ids: tuple[str, ...] = ()  # citations that named no source read in this run
    figures: int = 0  # figures stated by cited sentences as drafted
    figures_supported: int = 0  # of those, figures found in the cited passages


# --------------------------------------------------------------------------- events and summary


class Event(Message):
    """One line of ``events.jsonl``. Payloads are small JSON values; never secrets, never page text."""

    seq: int  # the log's order: arrival, which keeps each emitter's own order
    ts: float  # when the emitter recorded it (its clock), so not always rising with seq
    run_id: str
    type: str
    payload: dict[str, JsonValue] = Field(default_factory=dict)


class SourceEntry(Message):
    n: int
    title: str
    location: str
    url: str


class RunSummary(Message):
    """What ``--json`` prints and ``runs show`` reads back."""

    schema_version: int = SCHEMA_VERSION
    run_id: str
    status: RunStatus
    mode: Mode
    query: str
    report_path: str | None = None
    sources: tuple[SourceEntry, ...] = ()
    usage: Usage = Usage()
    duration_s: float = 0.0  # wall time since the run was asked for (Ray start-up included)
    research_s: float = 0.0  # the actors' work alone: coordinator start to result
    providers: dict[str, str] = Field(default_factory=dict)
    limited_by: str | None = None
    reason: str = ""
    follow_up_of: str | None = None  # the earlier run's id when this run was a follow-up


class RunResult(Message):
    """What the Coordinator hands back to the driver: the report to render and the run's totals."""

    request: Request
    status: Literal["completed", "no_answer"]
    report: Report
    usage: Usage = Usage()
    providers: dict[str, str] = Field(default_factory=dict)  # role -> provider that answered
    reason: str = ""
    limited_by: str | None = None


class Claim(Message):
    """The UrlPool's answer to a claim: fetch it yourself, reuse the cached text, or leave it."""

    url: str
    status: Literal["claimed", "cached", "taken"]
    owner: str
    doc: FetchedDoc | None = None


class SearchResult(Message):
    """Hits for one query from the gateway, with which provider answered and what failed."""

    query: str
    hits: tuple[SearchHit, ...]
    provider: str = ""
    errors: tuple[str, ...] = ()


class SearchRecord(Message):
    """One step of a sub-task's searching, kept in the run's ``searches.jsonl`` (its query plan,
    or the result of one search) so that a resumed run does not pay for it again."""

    subtask: str
    question: str
    queries: tuple[str, ...] = ()
    result: SearchResult | None = None


class PriorWork(Message):
    """What an unfinished sub-task had done when its run stopped (``policies.prior_work``):
    its researcher, restarted by a resume, reuses it instead of paying for it again."""

    question: str
    queries: tuple[str, ...] = ()
    results: tuple[SearchResult, ...] = ()


class FollowUpSeed(Message):
    """What a follow-up run inherits from an earlier run (and that run's own predecessors):
    its completed researcher reports and the texts it read. Loaded by the driver from the run
    directory; the docs go to the UrlPool, the rest to the Coordinator."""

    run_id: str
    query: str
    report_name: str = ""  # the earlier report's file name (stable: part of the report body)
    report_path: str = ""  # its full path (run-varying: footer only)
    context: str = ""  # its question with the subject its own thread gave it (policies.subject)
    reports: tuple[ResearcherReport, ...] = ()
    docs: tuple[FetchedDoc, ...] = ()


class GateSummary(Message):
    """What ``--json`` prints when the intent gate answered instead of starting a run."""

    schema_version: int = SCHEMA_VERSION
    status: Literal["gated"] = "gated"
    outcome: Literal["chitchat", "harmful", "ambiguous"]
    query: str
    reply: str
    reason: str = ""
