"""Control characters in a query or a title never reach a terminal or a report title: ``runs list``,
``attach``, CLI errors, the no-answer line, plan review, and the Markdown, HTML and JSON titles."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from deepresearch import cli
from deepresearch.commands import plan as cli_plan
from deepresearch.commands import runs as cli_runs
from deepresearch.config.settings import load_settings
from deepresearch.reports.export import render_html, render_json
from deepresearch.reports.markdown import Footer, render
from deepresearch.schemas import (
    Event,
    Finding,
    Report,
    ReportSection,
    Request,
    RunSummary,
    Source,
)
from deepresearch.storage import runs
from deepresearch.storage.run_dir import RunDir
from deepresearch.text.terminal import printable

HOSTILE = "solar\r\x1b[2J\x1b]0;pwned\x07\x00 output\x9b31m\u202egnp.exe\u2066\x7f"
# what must never be echoed: C0 (but newline where lines are kept), DEL, C1, bidi controls
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean(text: str) -> bool:
    return CONTROL.search(text) is None


def test_printable_removes_controls_and_keeps_the_words() -> None:
    assert printable(HOSTILE) == "solar [2J]0;pwned output31mgnp.exe"
    assert printable("a\tb\r\nc\u2028d") == "a b  c d"
    assert printable("ok: naïve café — 東京 👩‍🔬") == "ok: naïve café — 東京 👩‍🔬"  # ZWJ kept
    assert printable("one\r\ntwo\rthree\x1b", keep_lines=True) == "one\ntwo\nthree"
    assert printable("a\tb\x07", keep_lines=True) == "a\tb"


def test_runs_list_shows_one_clean_line_per_run(tmp_path: Path) -> None:
    run_dir = RunDir.create(tmp_path, "20260101-000000-aaaaaa")
    request = Request(run_id="20260101-000000-aaaaaa", query=HOSTILE, mode="quick", created_at=1.0)
    runs.write_record(run_dir, request, load_settings(env={}), tmp_path)
    run_dir.close()
    env = {"DEEP_RESEARCH_STATE_DIR": str(tmp_path)}
    result = CliRunner().invoke(cli_runs.runs_group, ["list"], env=env)
    assert result.exit_code == 0, result.output
    assert result.output.count("\n") == 1 and clean(result.output)
    assert "solar [2J]0;pwned output" in result.output
    as_json = CliRunner().invoke(cli_runs.runs_group, ["list", "--json"], env=env)
    assert json.loads(as_json.output)["query"] == HOSTILE  # data stays exact, JSON-escaped
    shown = CliRunner().invoke(cli_runs.runs_group, ["show", "20260101-000000-aaaaaa"], env=env)
    assert clean(shown.output) and json.loads(shown.output)["query"] == HOSTILE


def test_attach_lines_are_clean(capsys: pytest.CaptureFixture[str]) -> None:
    cli_runs._print_event(Event(seq=1, ts=0.0, run_id="r", type="t", payload={"q": HOSTILE}))
    out = capsys.readouterr().out
    assert clean(out) and out.count("\n") == 1


def test_cli_errors_and_no_answer_lines_are_clean(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEEP_RESEARCH_STATE_DIR", str(tmp_path))
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["runs", "show", f"bad{HOSTILE}"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("deep-research: error: ") and clean(err) and err.count("\n") == 1
    with pytest.raises(SystemExit):
        cli._fail(f"the query {HOSTILE!s} is odd", 2)
    assert clean(capsys.readouterr().err)
    summary = RunSummary(
        run_id="r", status="no_answer", mode="quick", query=HOSTILE, reason=f"searched {HOSTILE}"
    )
    with pytest.raises(SystemExit) as exit_info:
        cli._report(summary, as_json=False)
    assert exit_info.value.code == 3
    err = capsys.readouterr().err
    assert err.startswith("deep-research: no answer: searched solar") and clean(err)


def test_plan_review_echo_is_clean(capsys: pytest.CaptureFixture[str]) -> None:
    cli_plan._echo(f"  1. {HOSTILE}")
    assert clean(capsys.readouterr().err)


def _hostile_report() -> Report:
    url = "https://x.example/a"
    return Report(
        query=HOSTILE,
        title=HOSTILE,
        answer=f"Output rose.\r\n{HOSTILE}",
        answer_citations=(url,),
        sections=(
            ReportSection(
                heading=f"Output {HOSTILE}", findings=(Finding(text="a", citations=(url,)),)
            ),
            ReportSection(heading="Other", findings=(Finding(text="b", citations=(url,)),)),
        ),
        sources=(Source(url=url, title=f"Page {HOSTILE}", location=url),),
        limits=(f"limit {HOSTILE}",),
    )


def test_report_titles_and_headings_are_clean() -> None:
    footer = Footer(saved_path="/home/ann/r.md", run_id="r", mode="quick")
    markdown = render(_hostile_report(), footer)
    assert clean(markdown)
    assert markdown.startswith("# solar \\[2J\\]0;pwned output31mgnp.exe\n")
    assert "## Output solar" in markdown
    html = render_html(_hostile_report(), footer)
    assert clean(html) and "<title>solar [2J]0;pwned output31mgnp.exe</title>" in html
    record = json.loads(render_json(_hostile_report(), footer))
    assert record["title"] == printable(HOSTILE) and record["query"] == HOSTILE
    assert all(clean(s["heading"]) for s in record["sections"])
