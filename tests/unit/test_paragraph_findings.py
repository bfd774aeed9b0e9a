"""A finding is a sentence with the rest of its paragraph; contents pages are no search hits.

* "Kove IO filed a complaint" is followed in its paragraph by what the complaint alleges (the
  patents, the relief sought): the finding carries both, not only the sentence that matched;
* a paragraph's next, unrelated topic is not carried along, and no sentence is said twice;
  a sentence or two aside are passed over to reach the example (a command) the paragraph shows;
* the budget counts findings, not sentences; the verifier's quote holds the whole finding;
* a table of contents ("Item 1. Legal Proceedings: Page = 34") shares every word of a legal
  question and answers nothing: it is no search hit, by BM25 or as a row;
* a "latest" question's table rows come from the newest filing.
"""

from __future__ import annotations

from pathlib import Path

from test_local_search import inline

from deepresearch.llm_messages import FindingsDraft, FindingsTask, SourceText, WriteTask
from deepresearch.policies.synthesis.findings import from_draft
from deepresearch.policies.verification.support import best_passage
from deepresearch.prompts import render_task
from deepresearch.providers.llm.evidence import in_context
from deepresearch.providers.llm.extractive import answer_findings, answer_write
from deepresearch.providers.search.corpus_index import CorpusIndex
from deepresearch.schemas import FetchedDoc, Finding, ReportSection
from deepresearch.text.boilerplate import boilerplate_share
from deepresearch.text.line_items import LabelIndex
from deepresearch.text.sentences import CONTEXT_CHARS, build_units

LEGAL = (
    "Legal Proceedings\n"
    "In December 2018, Contoso Data filed a complaint against Acme Web Services in the\n"
    "United States District Court. The complaint alleges, among other things, that Acme\n"
    "storage infringes U.S. Patent Nos. 7,814,170 and 7,103,640. Contoso seeks damages of\n"
    "$1.2 billion and injunctive relief. Contoso filed a second complaint in March 2023.\n"
    "The weather in Springfield was pleasant all year.\n"
    "\n"
    "We dispute the allegations of wrongdoing and intend to defend ourselves vigorously.\n"
)
QUESTION = "What legal proceedings were disclosed in Acme's 10-Q?"


def _src(n: int, text: str, url: str = "", domain: str = "generic") -> SourceText:
    return SourceText(
        n=n, url=url or f"doc:a{n}.pdf#page=1", title="a", location="a", text=text, domain=domain
    )


def _findings(question: str, *texts: str, max_findings: int = 16) -> FindingsDraft:
    """The extractive findings of ``texts`` (source 1, 2, ...) for ``question``."""
    sources = tuple(_src(n, t) for n, t in enumerate(texts, 1))
    return answer_findings(
        FindingsTask(question=question, sources=sources, max_findings=max_findings)
    )


def test_a_sentence_knows_the_rest_of_its_paragraph() -> None:
    units = build_units([(1, LEGAL)])
    lead = next(u for u in units if u.text.startswith("In December 2018"))
    assert lead.follow[0].startswith("The complaint alleges")
    assert lead.follow[-1].startswith("The weather")  # the paragraph, up to CONTEXT_CHARS
    assert len(" ".join((lead.text, *lead.follow))) <= CONTEXT_CHARS
    last = next(u for u in units if u.text.startswith("We dispute"))
    assert last.follow == ()  # a paragraph ends at a blank line
    long = build_units([(1, " ".join(f"Sentence {i} states a long fact here." for i in range(60)))])
    assert len(" ".join((long[0].text, *long[0].follow))) <= CONTEXT_CHARS


def test_a_finding_carries_what_its_sentence_introduces() -> None:
    draft = answer_findings(FindingsTask(question=QUESTION, sources=(_src(1, LEGAL),)))
    complaint = next(f.text for f in draft.findings if "filed a complaint" in f.text)
    assert "7,814,170" in complaint and "$1.2 billion" in complaint, complaint
    assert "Springfield" not in complaint  # the paragraph's next topic is not the complaint's
    said = [f.text for f in draft.findings]
    for text in said:  # no sentence twice
        assert not any(text in other for other in said if other != text)


def test_a_sentence_inside_an_earlier_finding_joins_it_with_the_better_rank() -> None:
    units = build_units([(1, LEGAL)])
    first = next(i for i, u in enumerate(units) if u.text.startswith("In December"))
    second = next(i for i, u in enumerate(units) if u.text.startswith("The complaint alleges"))
    other = next(i for i, u in enumerate(units) if u.text.startswith("We dispute"))
    out = in_context(QUESTION, units, [other, second, first])
    assert [i for i, _ in out] == [other, first]  # ranked as its better sentence (2nd, not 3rd)
    assert "7,814,170" in out[1][1] and out[1][1].startswith("In December")


def test_the_budget_counts_findings_not_sentences() -> None:
    """Three sentences of one paragraph are one finding: more are selected to fill the budget
    (a list's is twice ``max_findings``: each complaint is a fact of its own)."""
    lead = (
        "A patent complaint was filed. An antitrust complaint was filed. A tax complaint was filed."
    )
    kinds = ("privacy", "labor", "contract", "fraud", "zoning", "export")
    others = "\n\n".join(f"A {kind} complaint was filed." for kind in kinds)
    draft = answer_findings(
        FindingsTask(
            question="Which complaints were filed against Acme?",
            sources=(_src(1, lead + "\n\n" + others),),
            max_findings=3,
        )
    )
    texts = [f.text for f in draft.findings]
    assert len(texts) == 6 and lead in texts, texts


def test_the_quote_of_a_paragraph_finding_holds_all_of_it() -> None:
    draft = answer_findings(FindingsTask(question=QUESTION, sources=(_src(1, LEGAL),)))
    complaint = next(f.text for f in draft.findings if "filed a complaint" in f.text)
    assert complaint in best_passage(complaint, LEGAL, 600)


def test_the_answer_ranks_a_finding_by_its_best_sentence() -> None:
    """A long finding whose last sentence states the asked-for rate is not outranked by a
    shorter one for its length alone."""
    rate = (
        "The office building was renovated in the spring and the summer of the year. The "
        "renovation of the building was finished on schedule and within its budget. Our "
        "effective tax rate was 18% for the quarter."
    )
    short = "The effective tax rate may vary, as in 2022 when it was 20% overall."
    url = "doc:a.pdf#page=2"
    findings = (Finding(text=short, citations=(url,)), Finding(text=rate, citations=(url,)))
    task = WriteTask(
        query="What was Acme's effective tax rate?",
        sections=(ReportSection(heading="q", findings=findings),),
        sources=(_src(1, rate + " " + short, url, domain="filings"),),
    )
    draft = answer_write(task)
    assert draft.answer.startswith("The office building"), draft.answer
    assert [f.text for f in draft.sections[0].findings] == [short, rate]


def test_an_explanations_answer_quotes_what_was_disclosed_beside_talk_of_it() -> None:
    """The suit's claim states a figure; sentences that share more of the question's words
    and state nothing ("their impact could be material") do not push it out of the Answer."""
    texts = (
        "The outcomes of our legal proceedings and contingent liabilities are uncertain, and"
        " their impact on us could be material.",
        "We evaluate our legal proceedings and contingent liabilities each quarter for their"
        " possible impact.",
        "We disclose legal proceedings and contingent liabilities in the notes to our statements"
        " when we judge that their impact on our results could be material.",
        "In July 2023, Kove alleged in legal proceedings that its impact on Acme could be"
        " $517 million in liabilities.",
    )
    url = "doc:a.pdf#page=2"
    task = WriteTask(
        query="What legal proceedings or contingent liabilities did Acme disclose, and what"
        " impact could they have?",
        sections=(
            ReportSection(
                heading="q", findings=tuple(Finding(text=t, citations=(url,)) for t in texts)
            ),
        ),
        sources=(_src(1, " ".join(texts), url, domain="filings"),),
    )
    assert "$517 million" in answer_write(task).answer


def test_an_explanation_hands_on_more_findings_than_a_figure() -> None:
    """Each suit is a sentence of its own: "what legal proceedings" is answered by several, "what
    was the damages figure" by one or two."""
    suits = "\n\n".join(
        f"In {month} 2023, {who} filed a legal complaint against Acme seeking damages."
        for month, who in zip(
            ("January", "February", "March", "April", "May", "June"),
            ("Kove", "Dialect", "Contoso", "Fabrikam", "Northwind", "Tailspin"),
            strict=True,
        )
    )

    def found(question: str) -> int:
        return len(_findings(question, suits, max_findings=2).findings)

    assert found("What legal proceedings did Acme disclose, and why?") == 4
    assert found("What damages did the legal complaint against Acme seek in 2023?") == 2


CONTENTS = (
    "Table of Contents\nINDEX\nPage\n"
    + "\n".join(
        f"Index: Item {i}. {name}: Page = {10 + i}"
        for i, name in enumerate(
            ("Financial Statements", "Legal Proceedings", "Risk Factors", "Exhibits"), 1
        )
    )
    + "\n"
)


def test_contents_lines_are_boilerplate_and_name_no_row() -> None:
    assert boilerplate_share(CONTENTS) >= 0.5
    assert boilerplate_share(LEGAL) == 0.0
    index = LabelIndex.build([CONTENTS])
    assert index.passage_scores("Acme legal proceedings") == {}


def test_a_contents_page_is_no_search_hit(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "a-contents.txt").write_text("ACME 10-Q legal proceedings\n" + CONTENTS * 2)
    (root / "b-legal.txt").write_text("ACME 10-Q\n" + LEGAL)
    (root / "c-other.txt").write_text("ACME 10-Q\nRevenue grew in every segment this quarter.\n")
    index = CorpusIndex.open(root, tmp_path / "cache", passage_chars=400, pool_factory=inline([]))
    urls = [h.url for h in index.search("Acme legal proceedings", 5)]
    assert "doc:b-legal.txt" in urls and "doc:a-contents.txt" not in urls, urls


def test_a_latest_question_takes_its_rows_from_the_newest_filing(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    root.mkdir()
    for name, end, value in (
        ("2022 Q3 ACME.txt", "September 30, 2022", "1,100"),
        ("2023 Q1 ACME.txt", "March 31, 2023", "1,200"),
        ("2023 Q3 ACME.txt", "September 30, 2023", "1,300"),
    ):
        (root / name).write_text(
            f"ACME Corporation\nQuarterly report for the quarterly period ended {end}\n\n"
            f"Statements of operations (in millions): Inventories: {end} = {value}\n"
        )
    index = CorpusIndex.open(root, tmp_path / "cache", passage_chars=400, pool_factory=inline([]))
    hits = index.search("What were ACME's inventories in the most recent quarter?", 2)
    assert hits[0].url == "doc:2023 Q3 ACME.txt", [h.url for h in hits]


SECTIONS = (
    "Legal Proceedings\n"
    "Patent matters\n"
    "In April 2019, VLSI filed three infringement suits against us seeking $1.5 billion.\n"
    "\n"
    "Facilities\n"
    "Our headquarters campus is in Santa Clara and houses most of our engineering staff.\n"
    "The proceedings of our annual meeting are published on our website each year.\n"
)


def test_a_sentence_knows_the_headings_above_it() -> None:
    units = build_units([(1, SECTIONS + "Revenue 1,234 1,100\n")])
    by_text = {u.text[:10]: u for u in units}
    assert by_text["In April 2"].heading == "Legal Proceedings / Patent matters"
    assert by_text["Our headqu"].heading == "Patent matters / Facilities"  # the last two
    assert by_text["Revenue 1,"].heading == ""  # a table row is its own title


def test_a_sentence_under_a_heading_the_question_names_is_evidence() -> None:
    """The suit never says "legal proceedings"; its heading does, and a sentence that only
    shares the word with the question ranks below it."""
    draft = _findings("What legal proceedings did Initech disclose?", SECTIONS)
    # the summary leads with the best-scoring finding
    assert draft.summary.startswith(
        "In April 2019, VLSI filed three infringement suits against us seeking $1.5 billion."
    ), draft.summary


def _filing(quarter: str, case: str) -> str:
    return (
        "Table of Contents\n"
        f"Our results for the {quarter} quarter were in line with plan.\n"
        "Legal Proceedings\n"
        f"{case}\n"
        "\n"
        "We dispute the allegations and intend to defend ourselves vigorously.\n"
        "Acme Inc. | Form 10-Q | 14\n"
    )


def test_a_heading_every_filing_repeats_is_still_the_heading_of_what_is_under_it() -> None:
    """Two filings of one company both carry "Legal Proceedings": a line repeated across sources
    at a page's top or foot is running matter, but inside the page it is the section's title,
    and the suit under it ("In May 2023, Dialect filed ...") is about legal proceedings."""
    units = build_units(
        [
            (1, _filing("second", "In May 2023, Dialect filed a complaint alleging infringement.")),
            (2, _filing("first", "In June 2022, Kove filed a complaint seeking $517 million.")),
        ]
    )
    suits = [u for u in units if "filed a complaint" in u.text]
    assert [u.heading for u in suits] == ["Legal Proceedings", "Legal Proceedings"]
    # the repeated running lines are neither units nor headings
    assert all("Table of Contents" not in u.heading for u in units)
    assert not any("Table of Contents" in u.text or "Form 10-Q" in u.text for u in units)
    draft = _findings(
        "What legal proceedings did Acme disclose?",
        _filing("second", "In May 2023, Dialect filed a complaint."),
        _filing("first", "In June 2022, Kove filed a complaint."),
    )
    assert any("Dialect filed a complaint" in f.text for f in draft.findings), draft.findings


def test_a_sentence_line_another_page_repeats_is_still_part_of_its_sentence() -> None:
    """A note that the discussion restates word for word repeats its lines on two pages, as a
    running header repeats its own: the line "benefit of 10.9% ..." was cut as one, and the
    sentence stating the tax rate ended "... respectively, and a"."""
    paragraph = (
        "Income tax as a percentage of income before income tax was an expense of 12.2% and "
        "11.3% for the third quarter and first nine months of fiscal year 2024, respectively, "
        "and a\nbenefit of 10.9% and 2.1% for the third quarter of fiscal year 2023, respectively.\n"
    )
    page = "Table of Contents\nNote 6 - Income Taxes\n{}Other matters follow here in full.\n12"
    units = build_units([(1, page.format(paragraph)), (2, page.format(paragraph))])
    rate = [u for u in units if u.text.startswith("Income tax as a percentage")]
    assert rate and all(u.text.endswith("fiscal year 2023, respectively.") for u in rate), rate
    assert not any("Table of Contents" in u.text for u in units)  # running matter still is
    # the rest of a sentence in capitals, and a table's column headers under an open line
    notice = (
        "The decrease in our effective tax rate for the quarter was primarily due to tax law "
        "changes, including the issuance of a notice by the U.S. Treasury\nDepartment, which delayed the effective date of the regulations to fiscal year "
        "2024.\nSegment results were as follows\nThree Months Ended\nSegment results hold.\n"
    )
    units = build_units([(1, page.format(notice)), (2, page.format(notice))])
    assert any(u.text.endswith("regulations to fiscal year 2024.") for u in units), units
    assert not any("Three Months Ended" in u.text for u in units)


def test_a_title_cased_line_is_a_heading_not_the_start_of_its_paragraph() -> None:
    """ "Note 13 - Commitments and Contingencies" has six words: a short-line rule alone ran it
    into the sentence below ("... Contingencies Purchase Obligations Our purchase obligations
    reflect ..."), which the Answer then quoted."""
    text = (
        "Note 13 - Commitments and Contingencies\n"
        "Purchase Obligations\n"
        "Our purchase obligations reflect our commitments to purchase components used to\n"
        "manufacture our products, including long-term supply and capacity agreements.\n"
        "Revenue for the quarter was up strongly in every market\n"
        "that we serve, and margins held.\n"
    )
    units = build_units([(1, text)])
    first = units[0]
    assert first.text.startswith("Our purchase obligations"), first.text
    assert first.heading == "Note 13 - Commitments and Contingencies / Purchase Obligations"
    # a sentence's first line that is not a title stays in its sentence
    assert any(u.text.startswith("Revenue for the quarter was up") for u in units)


def test_what_was_disclosed_ranks_above_talk_of_it() -> None:
    """For a question that asks no quantity, a sentence stating one ("Kove alleged ... $517
    million") is what was disclosed; a sentence that shares more of the question's words but
    states nothing ("The outcomes of our legal proceedings are unpredictable") is talk of it."""
    text = (
        "Legal Proceedings\n"
        "The outcomes of our legal proceedings and other legal contingencies are inherently\n"
        "unpredictable and could be material to our operating results.\n"
        "\n"
        "In July 2023, Kove alleged in its damages report that the company could be subject to\n"
        "$517 million in damages in the legal proceedings.\n"
    )
    draft = _findings("What legal proceedings were disclosed by Acme?", text)
    assert draft.summary.startswith("In July 2023, Kove a"), draft.summary  # the best first


def test_a_finding_carries_its_section_to_the_answer() -> None:
    """The writer sees findings, not pages: the suit's section travels with it, and its
    Answer ranks it as its selection did, above a sentence that only shares a word."""
    draft = _findings("What legal proceedings did Initech disclose?", SECTIONS)
    sections = {f.text[:10]: f.section for f in draft.findings}
    assert sections["In April 2"] == "Legal Proceedings / Patent matters"
    docs = [FetchedDoc(url="doc:a1.pdf#page=1", title="a", location="a", text=SECTIONS)]
    findings, _ = from_draft(draft, docs, 600)
    assert {f.section for f in findings} == set(sections.values())
    url = "doc:a.pdf#page=2"
    suit = Finding(
        text="In April 2019, VLSI filed three suits against us.",
        citations=(url,),
        section="Legal Proceedings / Patent matters",
    )
    meeting = Finding(
        text="The proceedings of our annual meeting are published on our website each year.",
        citations=(url,),
        section="Facilities",
    )
    task = WriteTask(
        query="What legal proceedings did Initech disclose?",
        sections=(ReportSection(heading="q", findings=(meeting, suit)),),
        sources=(_src(1, suit.text + " " + meeting.text, url, domain="filings"),),
    )
    assert answer_write(task).answer.startswith("In April 2019, VLSI"), answer_write(task).answer
    # a model writer is shown the section beside the finding, outside its words
    system, user = render_task(task, {"type": "object"})
    assert f"{suit.text} [1] (under: Legal Proceedings / Patent matters)" in user
    assert "(under: Legal Proceedings)" in system


def test_an_investees_rows_are_no_evidence() -> None:
    """A filing restates an investee's results; they are no figure of the filer's, for any
    writer: they are not handed on."""
    rivian = (
        "Required summarized financial information of Rivian as disclosed in its filings is as "
        "follows (in millions): Gross profit: Year Ended December 31, 2022 = (3,123)"
    )
    own = (
        "Statements of operations (in millions): Gross profit: Year Ended December 31, 2022 = 1,234"
    )
    draft = answer_findings(
        FindingsTask(
            question="What was Acme's gross profit in 2022?",
            sources=(_src(1, rivian), _src(2, own)),
        )
    )
    texts = [f.text for f in draft.findings]
    assert own in texts and rivian not in texts, texts


def test_when_only_an_investee_or_unrelated_text_is_read_nothing_is_handed_on() -> None:
    """The investee's gross profit is the only row naming the metric, and a lawsuit the only
    other sentence: neither answers a question about the filer's gross margin, so the writer
    gets no evidence and the run reports that it could not research the question."""
    rivian = (
        "Required summarized financial information of Rivian as disclosed in its filings is as "
        "follows (in millions): Gross profit: Year Ended December 31, 2022 = (3,123)"
    )
    lawsuit = "In March 2023, the plaintiffs alleged that Acme could be subject to $140 million."
    draft = answer_findings(
        FindingsTask(
            question="What was Acme's gross margin in the most recent 10-Q filing?",
            sources=(_src(1, rivian), _src(2, lawsuit)),
        )
    )
    assert draft.findings == (), draft.findings


def test_the_quote_holds_a_finding_that_starts_or_ends_inside_a_sentence_of_the_page() -> None:
    """The researcher read the page without a heading line and a line other pages repeat, so
    its finding starts after "Reporting" and ends at "changes"; the page's own sentences run
    the heading into the first and go on past the last. The quote still holds all of it."""
    page = (
        "Changes in Internal Control Over Financial Reporting\n"
        "There were no changes in the quarter that materially affected our internal control.\n"
        "In fiscal year 2022, we began an upgrade of our enterprise resource planning system.\n"
        "The upgrade will occur in phases over several fiscal years of the plan.\n"
        "We will continue to evaluate each quarter whether there are changes\n"
        "that materially affect our internal control over financial reporting.\n"
    )
    finding = (
        "There were no changes in the quarter that materially affected our internal control. "
        "In fiscal year 2022, we began an upgrade of our enterprise resource planning system. "
        "The upgrade will occur in phases over several fiscal years of the plan. "
        "We will continue to evaluate each quarter whether there are changes"
    )
    assert finding in best_passage(finding, page, 600)


def test_a_running_foot_is_not_part_of_the_last_paragraph_of_the_page() -> None:
    """The page's foot ("Financial Statements Notes to Financial Statements 18") follows its
    last paragraph and states a figure (the page number): it is no sentence of the finding."""
    page = (
        "Foreign currency contracts hedged $2.1 billion of exposures in the first nine months.\n"
        "The amounts excluded from effectiveness testing for currency contracts were $4 million.\n"
        "Financial Statements Notes to Financial Statements 18\n"
    )
    draft = answer_findings(
        FindingsTask(
            question="What effects did currency fluctuations have on Initech's statements?",
            sources=(_src(1, page),),
            max_findings=1,
        )
    )
    text = draft.findings[0].text
    assert "million" in text and "Notes to" not in text, text


HEDGES = (
    "Derivatives in Cash Flow Hedging Relationships\n"
    "The before-tax net gains or losses attributed to cash flow hedges recognized in other\n"
    "comprehensive income were $454 million net losses in the third quarter of 2023 and\n"
    "$646 million net losses in the first nine months of 2023.\n"
    "Substantially all of our cash flow hedges were foreign currency contracts for all periods.\n"
    "\n"
    "Our campus in Springfield opened in 2019 with 1,200 desks.\n"
    "The building is powered by renewable currency-neutral energy contracts.\n"
)


def test_a_sentence_that_refers_back_comes_with_the_figures_it_refers_to() -> None:
    """ "Substantially all of our cash flow hedges were foreign currency contracts" names the
    question's currency; the figures are in the sentence before it, which it refers back to
    (they share "cash flow hedges"). A figure sentence that shares no word with the next one
    (the campus's desks) is not carried into it, and the quote verifies."""
    draft = _findings("What effects did currency fluctuations have on Acme?", HEDGES)
    hedges = next(f.text for f in draft.findings if "foreign currency contracts" in f.text)
    assert hedges.startswith("The before-tax") and "$454 million" in hedges, hedges
    assert hedges in best_passage(hedges, HEDGES, CONTEXT_CHARS)
    units = build_units([(1, HEDGES)])
    energy = next(i for i, u in enumerate(units) if "renewable" in u.text)
    assert in_context("currency", units, [energy])[0][1].startswith("The building")
    said = [f.text for f in draft.findings]
    for text in said:  # no sentence twice
        assert not any(text in other for other in said if other != text), said


def test_a_sentence_before_already_said_is_not_said_again() -> None:
    units = build_units([(1, HEDGES)])
    figures = next(i for i, u in enumerate(units) if u.text.startswith("The before-tax"))
    refers = next(i for i, u in enumerate(units) if u.text.startswith("Substantially"))
    assert units[refers].before == units[figures].text
    out = in_context("currency hedges", units, [figures, refers])
    assert len(out) == 1 and out[0][1].count("$454 million") == 1, out
    # the sentence before is in an earlier finding that stops short of the one referring to it
    text = (
        "Acme reported revenue of $10 million in 2023. Hedging losses were $454 million in the"
        " quarter. Substantially all hedging contracts were swaps for all periods."
    )
    units = build_units([(1, text)])
    chosen = [0, 2]
    assert units[2].before == units[1].text
    out = in_context("Acme revenue", units, chosen)
    assert sum(t.count("$454 million") for _, t in out) == 1, out


HELP = """The name of the backup file is the original file with a ~ added to the end.
If you do not like the fact that the backup files end with ~, you can change
the extension: >

\t:set backupext=.bak

This will use ".bak" instead of "~".

To start a container with a shell, run:

```sh
docker run -it ubuntu bash
```

Then the shell of the container is ready for commands.
"""


def test_a_lead_in_sentence_is_quoted_with_the_example_it_introduces() -> None:
    texts = [u.text for u in build_units([(1, HELP)])]
    assert (
        "If you do not like the fact that the backup files end with ~, you can change the"
        " extension: `:set backupext=.bak`"
    ) in texts
    assert "To start a container with a shell, run: `docker run -it ubuntu bash`" in texts
    assert not any(t.startswith(("`", ":set", "docker")) for t in texts)  # no code alone


def test_a_long_indented_run_after_a_lead_in_is_read_as_text() -> None:
    text = "The options are these ones:\n" + "".join(
        f"    -{c} this option does the thing number {c} well\n" for c in "abcdef"
    )
    texts = [u.text for u in build_units([(1, text)])]
    assert not any("`" in t for t in texts)  # a list, not an example: its text as read
    assert any("-f this option does the thing number f well" in t for t in texts)


def test_an_options_list_after_a_lead_in_keeps_each_entry_as_read() -> None:
    """A short indented run of entries ("--force  Do not prompt") is a list, not an example: no
    entry is swallowed into the sentence before it as code."""
    text = (
        "Remove one or more volumes.\n\nOptions:\n"
        "    -f, --force    Force the removal of one or more volumes\n"
        "    --all          Remove all unused volumes\n"
    )
    texts = [u.text for u in build_units([(1, text)])]
    assert not any("`" in t for t in texts), texts
    assert any("--all Remove all unused volumes" in t for t in texts), texts


def test_a_shell_session_shows_its_commands_and_its_output_is_read_as_text() -> None:
    text = (
        "To list the running containers, run:\n\n"
        "    $ docker ps\n"
        "    CONTAINER ID   IMAGE    STATUS\n"
        "    4c01db0b339c   ubuntu   Up 2 hours\n\n"
        "The list shows one line per container.\n"
    )
    texts = [u.text for u in build_units([(1, text)])]
    assert "To list the running containers, run: `$ docker ps`" in texts, texts
    assert not any("CONTAINER" in t for t in texts), texts  # output is not the command's


def test_a_long_fenced_block_shows_its_first_lines_and_the_rest_is_still_read() -> None:
    """Of a fenced example longer than a lead-in quotes, the lines past those shown are read as
    before: nothing is lost."""
    block = "".join(f"step number {c} of the build\n" for c in "abcdef")
    text = f"Build it like this:\n\n```\n{block}```\nThe build then stops.\n"
    texts = [u.text for u in build_units([(1, text)])]
    lead = next(t for t in texts if t.startswith("Build it like this:"))
    assert "`step number a of the build`" in lead and "number e" not in lead, texts
    assert any("step number f of the build" in t for t in texts if t != lead), texts


def test_running_heads_framed_by_each_page_name_are_no_finding() -> None:
    """Each man page opens with its own name around the same words ("HEAD(1) User Commands
    HEAD(1)"): no two heads are the same line, yet they are running matter, not an answer."""
    head = (
        "HEAD(1) User Commands HEAD(1)\n\nNAME\nhead - output the first part of files\n\n"
        "DESCRIPTION\nPrint the first 10 lines of each FILE to standard output.\n"
    )
    tail = (
        "TAIL(1) User Commands TAIL(1)\n\nNAME\ntail - output the last part of files\n\n"
        "DESCRIPTION\nPrint the last 10 lines of each FILE to standard output.\n"
    )
    from deepresearch.text.sentences import build_units

    units = [u.text for u in build_units([(1, head), (2, tail)])]
    assert not any("User Commands" in u for u in units), units
    assert any(u.startswith("Print the first 10 lines") for u in units), units


SESSIONS = (
    "Suppose you are editing along, and it is the end of the day.  You want to quit work and\n"
    "pick up where you left off the next day.  You can do this by saving your editing session\n"
    "and restoring it the next day.\n"
    "   A Vim session contains all the information about what you are editing.  This includes\n"
    "things such as the file list, window layout, global variables, options and other\n"
    "information.  (Exactly what is remembered is controlled by the 'sessionoptions' option.)\n"
    "   The following command creates a session file: >\n"
    "\n"
    "\t:mksession vimbook.vim\n"
    "\n"
    "The weather in Springfield was pleasant all year.\n"
)


def test_a_finding_passes_over_an_aside_to_the_example_its_paragraph_shows() -> None:
    """The sentence that matches says what is done; two sentences on neither the question nor
    it stand between it and the command the paragraph shows. The finding reaches the command,
    with its example (the lead-in's follow carries it), and stops at the next topic."""
    units = build_units([(1, SESSIONS)])
    lead = next(u for u in units if u.text.startswith("You can do this"))
    assert (
        lead.follow[-1] == "The following command creates a session file: `:mksession vimbook.vim`"
    )
    question = "How do I save the current editing session and restore it later?"
    chosen = [units.index(lead)]
    ((_, text),) = in_context(question, units, chosen)
    assert text.endswith("creates a session file: `:mksession vimbook.vim`"), text
    assert "(Exactly what is remembered" in text


def test_a_finding_does_not_pass_over_an_aside_to_more_prose() -> None:
    """Without an example to reach, a sentence on neither ends the finding as before: the
    paragraph's next point is not carried along because a later sentence shares a word."""
    text = SESSIONS.replace(">\n\n\t:mksession vimbook.vim\n", "what is saved.\n")
    units = build_units([(1, text)])
    lead = next(u for u in units if u.text.startswith("You can do this"))
    question = "How do I save the current editing session and restore it later?"
    ((_, finding),) = in_context(question, units, [units.index(lead)])
    assert "This includes things" not in finding and "session file" not in finding, finding


def test_an_option_entry_two_commands_share_is_no_boilerplate() -> None:
    """Two prune commands read for one question both have "-f, --force Do not prompt for
    confirmation": a line repeated across sources, yet the answer for each, not furniture
    (the heading both repeat still is)."""
    page = (
        "Reference\n\nUsage: docker {0} prune [OPTIONS]\n\nRemove all unused {0}s\n\nOptions:\n"
        "  -f, --force           Do not prompt for confirmation\n"
        "      --help            Print usage\n"
    )
    units = build_units([(1, page.format("network")), (2, page.format("volume"))])
    entry = "-f, --force Do not prompt for confirmation"
    assert {u.source for u in units if entry in u.text} == {1, 2}, [u.text for u in units]
    assert not any("Reference" in u.text for u in units)
