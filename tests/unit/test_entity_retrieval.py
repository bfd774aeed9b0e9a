"""Retrieval keeps the question's entity and gathers one value per filing for trends.

* every search query names the question's subject, even a resolved coordination's variant;
* a document whose cover names another company ranks below one whose cover names the asked one,
  although a competitor's page is the better passage match (the asked company's filing calls
  itself "the Company");
* a trend question hands on each filing's best table row, not the best-scoring filing's prose;
* a manual's topic headings on its first page ("Folding") are no names a query is weighed by.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from test_local_search import inline

from deepresearch.config.settings import load_settings
from deepresearch.llm_messages import FindingsTask, SourceText
from deepresearch.policies.search.ranking import (
    IDENTITY_PENALTY,
    cover_names,
    identity_weights,
    prior_names,
)
from deepresearch.policies.search.source_scoring import key_terms
from deepresearch.providers.llm import rules
from deepresearch.providers.llm.evidence import latest_weights
from deepresearch.providers.llm.extractive import answer_findings
from deepresearch.providers.search.corpus_index import CorpusIndex
from deepresearch.text.question import analyze
from deepresearch.text.sentences import Unit


def test_every_query_names_the_subject_and_none_names_the_document() -> None:
    question = "Does Contoso report any new business acquisitions or divestitures in these 10-Qs?"
    queries = rules.search_queries(question, 6)
    assert len(queries) >= 3  # the coordination was resolved into variants
    assert all("Contoso" in q for q in queries), queries  # "divestitures" alone finds anyone's
    assert not any(w in q.split() for q in queries for w in ("10-Qs", "report", "reports"))


def test_one_side_of_a_coordination_of_names_is_not_given_the_other() -> None:
    queries = rules.search_queries("Compare Contoso's revenue with Fabrikam's", 4)
    assert any("Fabrikam" in q and "Contoso" not in q for q in queries), queries


def test_identity_weights_count_only_names_that_tell_covers_apart() -> None:
    covers = [
        cover_names("ACME CORPORATION\nQuarterly Report"),
        cover_names("Zeta Inc.\nQuarterly Report"),
        cover_names("Omega Holdings\nQuarterly Report"),
    ]
    weights = identity_weights("Acme inventory levels", covers)
    assert weights.tolist() == [1.0, IDENTITY_PENALTY, IDENTITY_PENALTY]
    assert np.all(identity_weights("inventory levels", covers) == 1.0)  # no name asked
    assert np.all(identity_weights("Quarterly Report inventory", covers) == 1.0)  # every cover
    assert np.all(identity_weights("Globex inventory", covers) == 1.0)  # on no cover
    # typed without capitals: any word may be the name, the covers tell which
    assert identity_weights("acme inventory levels", covers).tolist() == weights.tolist()
    assert np.all(identity_weights("quarterly report inventory", covers) == 1.0)
    # a capital anywhere: only the capitalized words are names, as before
    assert np.all(identity_weights("Inventory levels of acme", covers) == 1.0)
    # a name on no cover spelt like one that is: the filings it means
    assert identity_weights("Acmee inventory levels", covers).tolist() == weights.tolist()
    assert np.all(identity_weights("Acne inventory levels", covers) == 1.0)  # too short to tell


def test_a_query_without_capitals_weighs_as_names_only_the_words_that_tell_covers_apart() -> None:
    """ "how has nvidia's research changed, and what might be the implications": every word was
    weighed as a name in the document prior, and one filing's "might" made it the filing the
    question is about; only the words some covers hold are names."""
    covers = [
        cover_names("ACME CORPORATION\nQuarterly Report"),
        cover_names("Zeta Inc.\nQuarterly Report"),
    ]
    assert prior_names("most recent quarter acme research might implications", covers) == ["Acme"]
    assert prior_names("acmee research", covers) == ["Acmee"]  # spelt like a cover's name
    assert prior_names("Acme research in the Quarterly Report", covers) == [
        "Acme",
        "Quarterly",
        "Report",
    ]  # a capital anywhere: the capitalized words, as before


def _write(root: Path, name: str, text: str) -> None:
    (root / name).write_text(text)


def test_a_competitors_better_matching_page_ranks_below_the_asked_companys(
    tmp_path: Path,
) -> None:
    root = tmp_path / "corpus"
    root.mkdir()
    filler = "The Company designs and sells products through its retail and online stores. " * 8
    _write(
        root,
        "a.txt",
        "ACME CORPORATION\nQuarterly report\n\n"
        + filler
        + "\n\nThe Company's inventory levels were 5,433 million at quarter end, and the "
        "Company expects supply to remain stable.\n",
    )
    _write(
        root,
        "b.txt",
        "ZETA INC\nQuarterly report\n\n"
        + filler * 5  # a competitor named below the top of the document is not its identity
        + "\n\nInventory levels rose. Inventory levels at Zeta exceed those of Acme; inventory "
        "levels and supply chain inventory levels grew.\n",
    )
    _write(root, "c.txt", "OMEGA HOLDINGS\nQuarterly report\n\nOmega sells garden tools.\n")
    index = CorpusIndex.open(root, tmp_path / "cache", passage_chars=400, pool_factory=inline([]))
    hits = index.search("Acme inventory levels", 3)
    assert [h.url for h in hits][:2] == ["doc:a.txt", "doc:b.txt"], [h.url for h in hits]
    lower = index.search("acme inventory levels", 3)  # as typed on a terminal
    assert [h.url for h in lower][:2] == ["doc:a.txt", "doc:b.txt"], [h.url for h in lower]


def _row(date: str, value: str) -> str:
    return f"Statements of operations (in millions): Total net sales: Three Months Ended {date} = {value}"


def test_a_trend_question_gets_one_row_per_filing() -> None:
    question = "How has Contoso's total net sales changed over time?"
    assert analyze(question).shape == "trend"
    regions = ["Europe", "Japan", "China", "Americas"]
    products = ["phones", "tablets", "watches", "laptops"]

    def prose(i: int) -> str:  # sentences that outscore the row, different in every filing
        r, p = regions[i], products[i]
        return (
            f"Total net sales of {p} in {r} changed over time as total net sales of {p} grew. "
            f"Total net sales in {r} rose with total net sales of {p} and {r} services. "
        )

    filings = [
        ("doc:q1.pdf#page=4", "December 31, 2022", "117,154"),
        ("doc:q2.pdf#page=4", "April 1, 2023", "94,836"),
        ("doc:q3.pdf#page=4", "July 1, 2023", "81,797"),
        ("doc:q4.pdf#page=4", "June 25, 2022", "82,959"),
    ]
    sources = tuple(
        SourceText(
            n=i + 1,
            url=url,
            title=url,
            location=url,
            text=prose(i) + "\n" + _row(date, value) + "\n",
        )
        for i, (url, date, value) in enumerate(filings)
    )
    draft = answer_findings(FindingsTask(question=question, sources=sources, max_findings=4))
    texts = [f.text for f in draft.findings]
    for n, (_, _, value) in enumerate(filings, start=1):
        assert any(value in f.text and n in f.sources for f in draft.findings), (value, texts)


def test_latest_questions_prefer_units_stating_the_newest_date() -> None:
    q = analyze("What was Contoso's gross margin in the latest quarter?")
    units = [
        Unit("Gross margin: Three Months Ended June 25, 2022 = 1,000", 1, 0, True),
        Unit("Gross margin: Three Months Ended July 1, 2023 = 2,000", 2, 1, True),
    ]
    assert latest_weights(q, units)[1] > latest_weights(q, units)[0]
    # the newest filing's prose states no date, but it is the latest filing's text all the same
    prose = Unit("Gross margin rose on a favorable product mix.", 3, 2)
    weights = latest_weights(
        q, [*units, prose], {1: "doc:old.pdf", 2: "doc:new.pdf", 3: "doc:new.pdf"}
    )
    assert weights[2] == weights[1] > weights[0]
    assert latest_weights(analyze("What was Contoso's gross margin?"), units) == [1.0, 1.0]


def test_a_form_number_is_not_a_key_term() -> None:
    cfg = load_settings(None, {}, env={}).scoring
    key = {k.term for k in key_terms("Did Contoso report divestitures in these 10-Qs?", cfg)}
    assert "qs" not in key and "divestitur" in key


def test_a_comparison_query_gets_each_entitys_best_pages_in_turn(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    root.mkdir()
    strong = "Inventory levels rose; inventory levels and supply chain inventory levels grew.\n"
    weak = "The Company reported inventory levels of 5,433 million and other current assets.\n"
    for name, cover, body in [
        ("a1.txt", "ACME CORPORATION", weak),
        ("a2.txt", "ACME CORPORATION", weak),
        ("z1.txt", "ZETA INC", strong),
        ("z2.txt", "ZETA INC", strong),
        ("o.txt", "OMEGA HOLDINGS", "Omega sells garden tools.\n"),
    ]:
        _write(root, name, f"{cover}\nQuarterly report\n\n{body}")
    index = CorpusIndex.open(root, tmp_path / "cache", passage_chars=400, pool_factory=inline([]))
    firsts = {h.url[4:5] for h in index.search("Acme Zeta inventory levels", 2)}
    assert firsts == {"a", "z"}  # not Zeta's two better-matching pages first


def test_a_capitalized_function_word_is_no_name() -> None:
    question = "Has Contoso's spending changed? If so, what are the drivers?"
    assert not any("If" in q.split() for q in rules.search_queries(question, 4))
    # "If" opens a line on every filer's cover: as a name it made every cover "telling"
    covers = [cover_names("CONTOSO LTD\nIf an emerging growth company"), cover_names("ZETA\nIf")]
    covers.append(cover_names("OMEGA"))
    weights = identity_weights("Contoso spending If drivers", covers)
    assert weights.tolist() == [1.0, IDENTITY_PENALTY, IDENTITY_PENALTY]


def test_a_month_is_no_name() -> None:
    # a quarter-end month is on the cover of every filing of that quarter, whoever filed it
    covers = [
        cover_names("ACME CORPORATION\nFor the quarterly period ended July 1, 2023"),
        cover_names("ZETA INC\nFor the quarterly period ended July 1, 2023"),
        *(cover_names(f"{n}\nFor the quarterly period ended April 1, 2023") for n in "XYZ"),
    ]
    weights = identity_weights("Acme total net sales quarter ended July 1, 2023", covers)
    assert weights.tolist() == [1.0] + [IDENTITY_PENALTY] * 4


def test_a_manuals_topic_headings_are_no_names_a_query_word_is_weighed_by(
    tmp_path: Path,
) -> None:
    """A manual's first page heads its topics ("Creating Folds"): words its pages also write in
    lower case. Taken as the document's names, a query word found on other covers ("command")
    weighed every page without it at a tenth, so the chapter on folds ranked below pages on
    commands. Names a corpus never writes in lower case stay names (the tests above)."""
    root = tmp_path / "corpus"
    root.mkdir()
    filler = "Text about the editor and the many things a user can do with it. " * 6
    _write(
        root,
        "folds.txt",
        "Folding Chapter\n\n" + filler + "\n\nUse the zf operator to create a fold over the text "
        "a motion moves over; a fold hides lines.\n",
    )
    for name, head in [("cmd", "Command Lines"), ("win", "Windows"), ("find", "Searching")]:
        _write(
            root,
            f"{name}.txt",
            f"{head}\n\n" + filler + "\n\nEach command you type runs, and a command "
            "can create a new file or window.\n",
        )
    index = CorpusIndex.open(root, tmp_path / "cache", passage_chars=400, pool_factory=inline([]))
    hits = index.search("command creates fold", 3)
    assert hits[0].url == "doc:folds.txt", [h.url for h in hits]
