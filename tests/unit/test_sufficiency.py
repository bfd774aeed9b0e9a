"""Too little to answer: an off-topic corpus or an empty web ends in an honest no-answer report."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from list_sink import ListSink
from test_actors_inprocess import FakeFetcher
from test_local_search import inline

from deepresearch.actors.evaluator import Evaluator
from deepresearch.actors.inprocess import LocalSpawner
from deepresearch.config.settings import Settings, load_settings, overrides_from_flags
from deepresearch.per_run.coordinator import Coordinator
from deepresearch.per_run.url_pool import UrlPool
from deepresearch.policies.synthesis import sufficiency as suf
from deepresearch.policies.verification.citations import usable_sources
from deepresearch.providers.llm.extractive import ExtractiveLLM
from deepresearch.providers.search.base import SearchProvider
from deepresearch.providers.search.corpus_index import CorpusIndex
from deepresearch.providers.search.local import LocalDocuments, LocalSearch
from deepresearch.providers.search.web_engines import SearxngSearch
from deepresearch.providers.testing.searxng import FakeSearxng
from deepresearch.schemas import Finding, Request, ResearcherReport, RunResult, SearchResult

QUESTION = "What are the US semiconductor export controls on China?"
GARDEN = {
    "roses.md": "# Roses\nPrune roses in early spring. Pest control for aphids: spray soapy water. "
    "Roses need six hours of sun and export their scent in the evening.",
    "tomatoes.md": "# Tomatoes\nTomatoes need steady watering to avoid blossom end rot. Control "
    "weeds with mulch. Stake the plants when they reach knee height.",
    "compost.md": "# Compost\nA compost heap needs green and brown material in equal parts. Turn "
    "it every two weeks to control the smell and speed up decomposition.",
}
CHIPS = {
    "chips.md": "# Export rules\nIn October 2022 the US announced semiconductor export controls "
    "that restrict sales of advanced chips and chipmaking tools to China."
}


class ProviderGateway:
    """The researcher's gateway port over one search provider (no breaker, no retries)."""

    def __init__(self, provider: SearchProvider) -> None:
        self.provider = provider

    async def search(self, query: str, limit: int) -> SearchResult:
        hits = await self.provider.search(query, limit)
        return SearchResult(query=query, hits=tuple(hits), provider=self.provider.name)


def settings(tmp: Path, **flags: object) -> Settings:
    return load_settings(None, overrides_from_flags({"corpus.path": str(tmp), **flags}), env={})


async def run(
    s: Settings, gateway: object, fetcher: object, mode: str = "quick"
) -> tuple[RunResult, ListSink]:
    sink, llm = ListSink(), ExtractiveLLM()
    spawner = LocalSpawner(s, gateway, UrlPool(), sink, llm, [fetcher])  # type: ignore[arg-type]
    req = Request(run_id="r1", query=QUESTION, mode=mode)  # type: ignore[arg-type]
    evaluator = Evaluator(llm) if mode == "deep" else None
    coord = Coordinator(s, req, sink, llm, spawner, evaluator)  # type: ignore[arg-type]
    return await coord.run(), sink


async def corpus_run(
    tmp_path: Path, files: dict[str, str], mode: str = "quick"
) -> tuple[RunResult, ListSink]:
    root = tmp_path / "corpus"
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text)
    index = CorpusIndex.open(root, tmp_path / "cache", passage_chars=400, pool_factory=inline([]))
    gateway = ProviderGateway(LocalSearch(index))
    return await run(settings(root), gateway, LocalDocuments(index), mode)


@pytest.mark.parametrize("mode", ["quick", "deep"])
async def test_a_corpus_about_something_else_gives_an_honest_no_answer(
    tmp_path: Path, mode: str
) -> None:
    result, sink = await corpus_run(tmp_path, GARDEN, mode)
    assert result.status == "no_answer"
    report = result.report
    assert report.sources == () and report.sections == () and report.answer_citations == ()
    assert "Could not research this question" in report.answer
    assert "What was searched (local corpus): “" in report.answer
    assert report.notes == ()  # not "every statement below is quoted": nothing is
    assert "semiconductor export" in report.answer  # the queries it ran are listed
    assert "--corpus" in report.answer and "Suggestions:" in report.answer
    assert "[1]" not in report.answer
    assert "insufficient_sources" in sink.types()
    # the garden pages share "control" and "export" with the question, yet nothing is quoted
    assert any(t in ("findings_filtered", "hits_scored") for t in sink.types())


async def test_the_same_question_on_a_corpus_about_it_is_answered(tmp_path: Path) -> None:
    result, _ = await corpus_run(tmp_path, {**GARDEN, **CHIPS})
    assert result.status == "completed"
    assert [s.title for s in result.report.sources] == ["chips.md"]


async def test_a_web_that_returns_nothing_gives_an_honest_no_answer(tmp_path: Path) -> None:
    async with FakeSearxng() as fake, httpx.AsyncClient() as client:
        gateway = ProviderGateway(SearxngSearch(client, fake.base_url))
        s = load_settings(None, overrides_from_flags({"search.providers": "searxng"}), env={})
        result, _ = await run(s, gateway, FakeFetcher())
        assert fake.requests  # it did search
    assert result.status == "no_answer" and result.report.sources == ()
    assert "no source relevant to the question was found" in result.report.answer
    assert "(searxng)" in result.report.answer and "no hits" in result.report.answer
    assert "--corpus" in result.report.answer  # a web run suggests a local corpus


def report(*citations: str, queries: tuple[str, ...] = ("q",)) -> ResearcherReport:
    findings = tuple(Finding(text="t", citations=(c,)) for c in citations)
    return ResearcherReport(subtask_id="t1", question="q?", findings=findings, queries=queries)


def test_usable_sources_are_distinct_and_in_first_seen_order() -> None:
    reports = [report("a", "b"), report("b")]
    assert usable_sources(reports) == ["a", "b"]
    ctx = suf.SearchContext(providers=("local",), corpus=True, deep=True)
    out = suf.could_not_research("q?", "q?", reports, 3, ctx)
    assert "2 usable source(s) found, fewer than the 3 required" in out.answer
    assert out.status == "no_answer" and out.sources == ()


def test_findings_must_cover_the_question_and_the_sources_must_be_on_topic() -> None:
    cfg = load_settings(None, None, env={}).scoring
    on = Finding(text="The US restricts semiconductor exports to China.", citations=("u",))
    weak = Finding(text="Weeds are a problem.", citations=("u",))
    texts = ["The US restricts semiconductor exports to China. Weeds are a problem."]
    check = suf.check_findings(QUESTION, [on, weak], texts, cfg)
    assert check.kept == (on,) and check.dropped == 1 and not check.off_topic
    garden = suf.check_findings(QUESTION, [weak], [GARDEN["roses.md"]], cfg)
    assert garden.off_topic and garden.kept == () and garden.topic_coverage < 0.55


def test_a_models_paraphrase_is_judged_by_the_topic_of_its_sources_only() -> None:
    cfg = load_settings(None, None, env={}).scoring
    para = Finding(
        text="Washington limited shipments of advanced chips to Beijing.", citations=("u",)
    )
    texts = ["The US restricts semiconductor exports to China under new export controls."]
    assert suf.check_findings(QUESTION, [para], texts, cfg, quoted=True).kept == ()
    assert suf.check_findings(QUESTION, [para], texts, cfg, quoted=False).kept == (para,)
    off = suf.check_findings(QUESTION, [para], [GARDEN["roses.md"]], cfg, quoted=False)
    assert off.off_topic and off.kept == ()


def test_a_table_row_is_judged_by_what_it_measures_not_by_names_it_never_repeats() -> None:
    """A filing's table row never repeats the company or quarter its title names ("Initech",
    "Q3"): beside a sentence that names both, it would cover too little of the question. It is
    judged by the question's other words, with its source's title; a row measuring nothing
    asked is still dropped."""
    cfg = load_settings(None, None, env={}).scoring
    question = "What insights into inventory management can be gleaned from Initech's Q3 2022 inventory levels?"
    row = Finding(
        text="Inventories (in millions): Total inventories: Oct 1, 2022 = 12,831",
        citations=("doc:a.pdf#page=7",),
    )
    land = Finding(
        text="Property (in millions): Land and buildings: Oct 1, 2022 = 1,000",
        citations=("doc:a.pdf#page=7",),
    )
    bridge = Finding(
        text="Q3 2022 gross margin fell on Initech inventory reserves and management charges.",
        citations=("doc:a.pdf#page=30",),
    )
    texts = [f"{row.text}\n{land.text}\n{bridge.text}"]
    assert suf.check_findings(question, [row, land, bridge], texts, cfg).kept == (row, bridge)
    titles = {"doc:a.pdf#page=7": "2022 Q3 Initech.pdf", "doc:a.pdf#page=30": "2022 Q3 Initech.pdf"}
    check = suf.check_findings(question, [row, land, bridge], texts, cfg, titles=titles)
    assert check.kept == (row, bridge)


def test_a_row_in_the_filings_words_covers_the_questions_term() -> None:
    """A company reports "net sales" where the question says "revenue": the row is kept."""
    cfg = load_settings(None, None, env={}).scoring
    row = Finding(
        text="Statements of operations (in millions): Total net sales: July 1, 2023 = 81,797",
        citations=("doc:a.pdf#page=4",),
    )
    texts = [f"Contoso quarterly report\n{row.text}"]
    assert suf.check_findings("What was revenue of Contoso in 2023?", [row], texts, cfg).kept == (
        row,
    )
