"""Whose figures a finding states: a question about a company no source is by gets no one
else's figures under its name.

* a name is named case-blind, as the whole name or each of its words but its legal form;
* a finding is someone else's when every source it cites is by someone (its cover says so)
  that none of the question's names are, and the source text it rests on names none of them
  either: Intel's revenue is no answer about AMD; a model's words ("AMD's revenue was ...")
  do not make it one; a source of unknown author and a quote that names the company stay;
* the report's "gaps and limits" say which of the question's names nothing kept names, and
  which of its periods nothing kept states;
* a comparison whose filings read are all one company's labels that company's line;
* a could-not-research report says whose documents were read, or "did you mean ..." the one
  spelt like the asked name (the search reads the filings a misspelt name means);
* end to end over a corpus of two companies' Markdown filings (their pipe tables read as
  self-describing rows, as an HTML or office document's are): a question about a third
  company ends in the honest could-not-research report, and a comparison with it answers for
  the company read and says the other is not covered; a ticker the file name holds
  ("2023 Q3 ZTA.md") names its filing.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from list_sink import ListSink

from deepresearch.actors.inprocess import LocalSpawner
from deepresearch.actors.search_gateway import SearchGateway
from deepresearch.config.settings import load_settings, overrides_from_flags
from deepresearch.config.trust import ScoringSettings
from deepresearch.domains.filings.compose import compose
from deepresearch.per_run.coordinator import Coordinator
from deepresearch.per_run.url_pool import UrlPool
from deepresearch.policies.synthesis.sufficiency import check_findings, whose_documents
from deepresearch.policies.synthesis.synthesis import uncovered_notes
from deepresearch.providers.assembly import from_settings as assembly
from deepresearch.providers.breakers import breaker_config, retry_policy
from deepresearch.run import driver
from deepresearch.schemas import Evidence, Finding, ResearcherReport, Source
from deepresearch.text.names import names_entity, proper_entities
from deepresearch.text.question import analyze

ROW = "Statements of income (in millions): Net revenue: Three Months Ended Sep 30, 2023 = 14,158"
PAGE = "doc:2023 Q3 INTC.pdf#page=6"


def test_a_name_is_named_case_blind_whole_or_word_by_word() -> None:
    assert names_entity("Amazon", "AMAZON.COM, INC.")
    assert names_entity("AMD", "competitors such as AMD and NVIDIA")
    assert not names_entity("AMD", "AMDOCS LIMITED")  # a word, not a part of one
    assert names_entity("AWS Amazon Web Services", "AWS revenue; Amazon Web Services grew")
    assert not names_entity("Data Center Group", "DCAI revenue")
    # a legal form is no part of the name a cover must print
    assert names_entity("Microsoft Corp", "MICROSOFT CORPORATION")
    assert names_entity("NVIDIA Corp", "NVIDIA CORPORATION")
    assert not names_entity("Omega Corp", "ACME CORP.")


def _check(question: str, *findings: Finding, authors: dict[str, str], quoted: bool = True):  # type: ignore[no-untyped-def]
    texts = [ROW, "Revenue was $14.2 billion in Q3 2023. Competitors such as AMD grew.", "sales"]
    return check_findings(question, findings, texts, ScoringSettings(), quoted, {}, authors)


def test_another_companys_findings_are_no_answer_about_the_asked_one() -> None:
    intel = {PAGE: "INTEL CORPORATION"}
    row = Finding(text=ROW, citations=(PAGE,))
    assert _check("What was AMD's revenue in Q3 2023?", row, authors=intel).kept == ()
    assert _check("what was amd's revenue in q3 2023?", row, authors=intel).kept == ()
    assert _check("What was Intel's revenue in Q3 2023?", row, authors=intel).kept == (row,)
    # a title-cased metric is no company: the sources write "sales" in lower case
    assert _check("What were Net Sales in Q3 2023?", row, authors=intel).kept == (row,)
    # who the source is by is unknown (a web page, a corpus without covers): nothing is told
    assert _check("What was AMD's revenue in Q3 2023?", row, authors={}).kept == (row,)
    # Intel's filing quoting a competitor by name is about it
    mention = Finding(
        text="Revenue was $14.2 billion in Q3 2023. Competitors such as AMD grew.",
        citations=(PAGE,),
    )
    assert _check("What was AMD's revenue in Q3 2023?", mention, authors=intel).kept == (mention,)


def test_a_company_whose_name_is_written_in_lower_case_is_still_asked_about() -> None:
    """ "Apple or Microsoft": Apple's filing prints "investor.apple.com", and Apple was taken for
    a common word, so that every finding from Apple's filings was dropped as someone else's."""
    page = "doc:2023 Q3 ITK.pdf#page=4"
    row = Finding(text=ROW, citations=(page,))
    authors = {page: "Initech Inc.", PAGE: "ZETA CORPORATION"}
    question = "Which company had higher revenue in Q3 2023, Initech or Zeta?"
    about = "Higher revenue in Q3 2023 for the company than for Zeta."
    web = [ROW, about, "Visit investor.initech.com or write to ir@initech.com."]
    assert proper_entities(["Initech", "Zeta"], web) == ["Initech", "Zeta"]
    prose = [ROW, about, "Sales of the initech brand grew."]  # lower case, yet its author
    for texts in (web, prose):
        kept = check_findings(question, [row], texts, ScoringSettings(), True, {}, authors).kept
        assert kept == (row,)


def test_a_question_typed_without_capitals_names_its_company_in_any_word() -> None:
    """ "what was amd revenue" (no capital, no possessive) got Intel's rows, and "what tax rate
    was reported by nvidia" Microsoft's sentence: a word the sources never write in lower case,
    or one a source's author is by, is a name there too."""
    intel = {PAGE: "INTEL CORPORATION"}
    row = Finding(text=ROW, citations=(PAGE,))
    assert _check("what was amd revenue in q3 2023?", row, authors=intel).kept == ()
    assert _check("what was intel revenue in q3 2023?", row, authors=intel).kept == (row,)
    zeta_page = "doc:2023 Q3 ZETA.pdf#page=4"
    zeta = Finding(text=ROW.replace("14,158", "9,999"), citations=(zeta_page,))
    both = {**intel, zeta_page: "ZETA INC."}
    kept = _check("what was the revenue of intel in q3 2023?", row, zeta, authors=both).kept
    assert kept == (row,)


def test_a_models_words_do_not_make_a_finding_the_asked_companys() -> None:
    """A model may write any name: it is judged by the passage its words rest on."""
    lie = Finding(
        text="AMD's revenue was 14,158 million in Q3 2023.",
        citations=(PAGE,),
        evidence=(Evidence(url=PAGE, quote=ROW),),
    )
    check = _check(
        "What was AMD's revenue in Q3 2023?", lie, authors={PAGE: "INTEL CORPORATION"}, quoted=False
    )
    assert check.kept == () and check.dropped == 1


def _report(question: str, text: str, by: str) -> ResearcherReport:
    return ResearcherReport(
        subtask_id="t1",
        question=question,
        findings=(Finding(text=text, citations=(PAGE,)),),
        sources=(Source(url=PAGE, title="2023 Q3 INTC.pdf", location="p. 6", by=by),),
    )


def test_the_gaps_say_which_asked_names_nothing_kept_names() -> None:
    query = "Compare Intel and AMD revenue in Q3 2023."
    notes = uncovered_notes(query, [_report(query, ROW, "INTEL CORPORATION")])
    assert len(notes) == 1 and "names AMD" in notes[0] and "Intel" not in notes[0], notes
    assert uncovered_notes(query, []) == ()  # nothing written: the no-answer report says why
    # a name the findings use counts, wherever the source is from
    said = _report(query, "Intel and AMD both reported revenue of 14,158 million.", "")
    assert uncovered_notes(query, [said]) == ()


def test_the_gaps_say_which_asked_period_nothing_kept_states() -> None:
    """A filing of another quarter answers, if at all, with its own dates: the reader is told
    the asked one is not among them."""
    query = "What was Intel's revenue for the quarter ended December 28, 2024?"
    notes = uncovered_notes(query, [_report(query, ROW, "INTEL CORPORATION")])
    assert notes == (
        "No finding and no source's title states December 28, 2024: the figures in this report "
        "are of the periods they state.",
    )
    assert uncovered_notes("What was Intel's revenue in 2025?", [_report(query, ROW, "")])
    stated = "What was Intel's revenue for the quarter ended Sep 30, 2023?"
    assert uncovered_notes(stated, [_report(stated, ROW, "INTEL CORPORATION")]) == ()
    assert (
        uncovered_notes("What was Intel's revenue in 2023?", [_report(query, ROW, "INTEL")]) == ()
    )


def test_the_could_not_research_report_says_whose_documents_were_read() -> None:
    """A name no document read is by: the authors read, or the one spelt like it."""
    read = ResearcherReport(
        subtask_id="t1", question="q", authors_read=("Apple Inc.", "INTEL CORPORATION")
    )
    assert whose_documents("What was Appel's revenue?", [read]) == [
        "No document read is by Appel: did you mean Apple Inc.?"
    ]
    assert whose_documents("What was AMD's revenue?", [read]) == [
        "No document read is by AMD: they are by Apple Inc., INTEL CORPORATION."
    ]
    assert whose_documents("What was Intel Corp's revenue?", [read]) == []
    assert (
        whose_documents("What was AMD's revenue?", [read.model_copy(update={"authors_read": ()})])
        == []
    )


def test_a_comparison_read_from_one_companys_filings_labels_its_line() -> None:
    query = "Compare Intel and AMD revenue in Q3 2023."
    composed = compose(query, [(ROW, (1,), 0)], (), {1: "2023 Q3 INTC.pdf (INTEL CORPORATION)"})
    assert composed is not None and composed[0].startswith("Intel: Net revenue"), composed
    unknown = compose(query, [(ROW, (1,), 0)], (), {1: "2023 Q3 INTC.pdf"})
    assert unknown is not None and unknown[0].startswith("Net revenue"), unknown
    # tickers side by side are names of their own, and a row leads with the one its source is
    tickers = "AAPL MSFT INTC revenue in Q3 2023"
    assert analyze(tickers).entities == ("AAPL", "MSFT", "INTC")
    led = compose(tickers, [(ROW, (1,), 0)], (), {1: "2023 Q3 INTC.pdf (INTEL CORPORATION)"})
    assert led is not None and led[0].startswith("INTC: Net revenue"), led
    # a name typed in lower case leads as the source's title writes it
    typed = compose("what was intel's revenue in q3 2023?", [(ROW, (1,), 0)], (), {1: "Intel Q3"})
    assert typed is not None and typed[0].startswith("Intel: Net revenue"), typed


FILING = """QUARTERLY REPORT
{name}
For the quarter ended September 30, 2023

Our products sold well in every region during the quarter ended September 30, 2023.

Statements of income (in millions)

| | Three Months Ended September 30, 2023 | Three Months Ended September 30, 2022 |
| --- | --- | --- |
| Net revenue | {revenue} | 1,100 |
| Cost of sales | 700 | 650 |
"""


def _run(corpus: Path, query: str, tmp: Path) -> str:
    flags = {
        "state_dir": str(tmp / "state"),
        "corpus.path": str(corpus),
        "corpus.cache_dir": str(tmp / "cache"),
        "run.output_dir": str(tmp / "out"),
        "llm.provider": "extractive",
    }
    settings = load_settings(None, overrides_from_flags(flags), env={})
    prep = driver.prepare(query, "quick", settings)
    s, sink = prep.settings, ListSink()

    async def go():  # type: ignore[no-untyped-def]
        llm = assembly.build_llm_provider(s, prep.keys)
        gateway = SearchGateway(
            assembly.build_search_providers(s),
            breaker_config(s.search.breaker),
            retry_policy(s.search.retry),
            sink=sink,
        )
        fetchers = assembly.build_fetchers(s)
        spawner = LocalSpawner(s, gateway, UrlPool(docs=sink), sink, llm, fetchers)
        return await Coordinator(s, prep.request, sink, llm, spawner, None).run()

    summary = driver.finish(prep, asyncio.run(go()), 0.1)
    return Path(summary.report_path).read_text("utf-8")


def test_a_company_no_filing_is_by_gets_no_figures_end_to_end(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "2023 Q3 ACME.md").write_text(FILING.format(name="ACME INC.", revenue="1,234"))
    # a file named by the ticker a question may use: its cover says ZETA CORP.
    (corpus / "2023 Q3 ZTA.md").write_text(FILING.format(name="ZETA CORP.", revenue="5,678"))
    (corpus / "notes.md").write_text("Meeting notes\n\nNothing about anyone in particular.\n")
    with tempfile.TemporaryDirectory(dir=tmp_path) as tmp:
        own = _run(corpus, "What was Acme's net revenue in Q3 2023?", Path(tmp))
    assert "Acme: Net revenue (in millions), Three Months Ended September 30, 2023: 1,234" in own
    with tempfile.TemporaryDirectory(dir=tmp_path) as tmp:
        alone = _run(corpus, "What was Omega's net revenue in Q3 2023?", Path(tmp))
    assert "Could not research this question" in alone, alone
    assert "1,234" not in alone and "5,678" not in alone, alone
    with tempfile.TemporaryDirectory(dir=tmp_path) as tmp:
        typo = _run(corpus, "What was Acmee's net revenue in Q3 2023?", Path(tmp))
    assert "No document read is by Acmee: did you mean ACME INC.?" in typo, typo
    assert "1,234" not in typo, typo  # Acme's figures are not given as Acmee's
    with tempfile.TemporaryDirectory(dir=tmp_path) as tmp:
        both = _run(corpus, "Compare Acme and Omega net revenue in Q3 2023.", Path(tmp))
    answer = both.split("## Answer", 1)[1].split("\n## ", 1)[0]
    assert "Acme: Net revenue" in answer and "1,234" in answer, answer
    assert "Omega:" not in answer and "5,678" not in answer, answer
    assert "no source's title names Omega" in both, both
    with tempfile.TemporaryDirectory(dir=tmp_path) as tmp:
        ticker = _run(corpus, "What was ZTA's revenue in the latest quarter?", Path(tmp))
    assert "ZTA: Net revenue (in millions), Three Months Ended September 30, 2023: 5,678" in ticker
