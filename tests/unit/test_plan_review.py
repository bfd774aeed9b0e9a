"""Plan review: plan files are checked, the review loop edits the agenda, the Coordinator researches
exactly a fixed agenda (in-process), and resume keeps it."""

from __future__ import annotations

from pathlib import Path

import pytest
from list_sink import ListSink
from test_actors_inprocess import FakeFetcher, FakeGateway

from deepresearch.actors.evaluator import Evaluator
from deepresearch.actors.inprocess import LocalSpawner
from deepresearch.commands import plan as cli_plan
from deepresearch.config.settings import Settings, load_settings, overrides_from_flags
from deepresearch.errors import InputError
from deepresearch.per_run.coordinator import Coordinator
from deepresearch.per_run.url_pool import UrlPool
from deepresearch.providers.llm.extractive import ExtractiveLLM
from deepresearch.providers.testing.scripted_llm import ScriptedLLM
from deepresearch.run.plan_file import dump_plan, parse_plan
from deepresearch.schemas import Request


def settings(**flags: object) -> Settings:
    return load_settings(None, overrides_from_flags({"search.hits_per_query": 12, **flags}), env={})


# --------------------------------------------------------------------------- plan files


def test_plan_file_forms_and_round_trip() -> None:
    assert parse_plan("- A?\n- '  B   b? '\n- A?\n", "p.yaml", 5) == ("A?", "B b?")
    assert parse_plan('subtasks: ["A?", "B?"]', "p.yaml", 5) == ("A?", "B?")
    text = dump_plan(["What was: A?", "B #2?"], "the query")
    assert text.startswith("# Research agenda for: the query\n")
    assert parse_plan(text, "p.yaml", 5) == ("What was: A?", "B #2?")


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("", "no sub-questions"),
        ("[]", "no sub-questions"),
        ("subtasks: []", "no sub-questions"),
        ("- A?\n- 3\n", "item 2 is not text"),
        ("- A?\n- {x: 1}\n", "item 2 is not text"),
        ("- '   '\n", "item 1 is empty"),
        ("- [unclosed\n", "not valid YAML"),
        ("just a string", "expected a list"),
        ('steps: ["A?"]', "unknown key 'steps'"),
        ("\n".join(f"- Q{i}?" for i in range(6)), "6 sub-questions; the limit is 5"),
        (f"- {'x' * 600}\n", "longer than 500"),
    ],
)
def test_bad_plan_files_are_one_line_errors(text: str, needle: str) -> None:
    with pytest.raises(InputError) as err:
        parse_plan(text, "plan.yaml", 5)
    message = str(err.value)
    assert needle in message and message.startswith("plan.yaml") and "\n" not in message


def test_plan_options_are_checked_before_anything_runs(tmp_path: Path) -> None:
    s = settings()
    plan = tmp_path / "plan.yaml"
    plan.write_text("- A?\n")
    with pytest.raises(InputError, match="applies to --mode deep"):
        cli_plan.check_options("quick", plan, False, s, True)
    with pytest.raises(InputError, match="--plan-file"):
        cli_plan.check_options("deep", None, True, s, False)  # no TTY, no file
    with pytest.raises(InputError, match="cannot read plan file"):
        cli_plan.check_options("deep", tmp_path / "missing.yaml", False, s, False)
    assert cli_plan.check_options("deep", plan, True, s, False) == ("A?",)
    assert cli_plan.check_options("quick", None, False, s, False) == ()


def test_review_keeps_drops_edits_and_adds() -> None:
    answers = iter(["k", "d", "e", "C in 2024?", "D?", ""])
    prompts: list[str] = []

    def ask(text: str, default: str) -> str:
        prompts.append(text)
        return next(answers) or default

    shown: list[str] = []
    agenda = cli_plan.review(["A?", "B?", "C?"], ask, shown.append, 5)
    assert agenda == ("A?", "C in 2024?", "D?")
    assert "  2. B?" in shown and shown[-1] == "  3. D?"


def test_review_that_drops_everything_is_an_error() -> None:
    with pytest.raises(InputError, match="no sub-questions"):
        cli_plan.review(["A?"], lambda text, default: "d" if "[d]rop" in text else "", print, 5)


def test_an_invalid_answer_is_asked_again_with_a_hint() -> None:
    answers = iter(["x", "KEEP", "delete", "Drop", ""])
    prompts: list[str] = []
    shown: list[str] = []

    def ask(text: str, default: str) -> str:
        prompts.append(text)
        return next(answers)

    agenda = cli_plan.review(["A?", "B?"], ask, shown.append, 5)
    assert agenda == ("A?",)  # "x" and "delete" were neither keep nor drop
    assert [p.split("\n")[0] for p in prompts[:4]] == ["1. A?", "1. A?", "2. B?", "2. B?"]
    assert shown.count(cli_plan.HINT) == 2


def test_end_of_input_stops_the_review_and_ctrl_c_interrupts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import click

    def eof(prompt: str) -> str:
        raise EOFError

    monkeypatch.setattr(click.termui, "visible_prompt_func", eof)
    with pytest.raises(InputError, match="end of input; nothing was researched"):
        cli_plan._ask("1. A?", "k")

    def ctrl_c(prompt: str) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr(click.termui, "visible_prompt_func", ctrl_c)
    with pytest.raises(click.exceptions.Abort):  # exit 130 "interrupted", as anywhere else
        cli_plan._ask("1. A?", "k")


# --------------------------------------------------------------------------- the Coordinator


async def test_coordinator_researches_exactly_a_fixed_plan() -> None:
    s = settings(**{"deep.max_parallel": 2})
    llm = ScriptedLLM({}, delegate=ExtractiveLLM())  # a planner or evaluator call would fail
    sink, fetcher = ListSink(), FakeFetcher()
    spawner = LocalSpawner(s, FakeGateway(), UrlPool(), sink, llm, [fetcher])  # type: ignore[arg-type]
    plan = ("How many widget units were sold in 2024?", "What do plants make besides widgets?")
    req = Request(run_id="r1", query="Widgets", mode="deep", plan=plan)
    coord = Coordinator(s, req, sink, llm, spawner, Evaluator(llm))  # type: ignore[arg-type]
    result = await coord.run()
    assert [r._task.question for r in spawner.spawned] == list(plan)
    ready = [p for t, p in sink.events if t == "plan_ready"]
    assert ready[0]["subtasks"] == list(plan)
    assert not llm.calls_for("planner") and not llm.calls_for("evaluator")
    assert result.status == "completed"
    assert sink.checkpoints[-1]["request"]["plan"] == list(plan)  # resume keeps the agenda


async def test_without_a_plan_the_planner_still_plans() -> None:
    s = settings()
    llm = ExtractiveLLM()
    sink = ListSink()
    spawner = LocalSpawner(s, FakeGateway(), UrlPool(), sink, llm, [FakeFetcher()])  # type: ignore[arg-type]
    query = "What were widget sales and gadget output in 2024?"
    req = Request(run_id="r1", query=query, mode="deep")
    await Coordinator(s, req, sink, llm, spawner, Evaluator(llm)).run()  # type: ignore[arg-type]
    ready = [p for t, p in sink.events if t == "plan_ready"]
    # the whole question, then its two parts
    assert ready[0]["count"] == 3 and "evaluated" in sink.types()


def test_request_plan_survives_the_run_record(tmp_path: Path) -> None:
    from deepresearch.storage import runs
    from deepresearch.storage.run_dir import RunDir

    run_dir = RunDir.create(tmp_path, "r1")
    req = Request(run_id="r1", query="Widgets", mode="deep", plan=("A?", "B?"))
    runs.write_record(run_dir, req, settings(), tmp_path)
    assert runs.read_record(run_dir).request.plan == ("A?", "B?")


def test_review_plan_on_a_terminal_starts_from_the_planners_agenda(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    answers = iter(["d", "k", "e", "What was Microsoft revenue in fiscal 2023?", ""])
    seen: list[str] = []

    def ask(text: str, default: str) -> str:
        seen.append(text)
        return next(answers) or default

    monkeypatch.setattr(cli_plan, "_ask", ask)
    monkeypatch.setattr(cli_plan, "_echo", lambda text: None)
    query = "Compare Apple and Microsoft revenue in 2023"
    agenda = cli_plan.agenda_to_research(query, settings(), (), True, True)
    assert agenda == (
        "What was Apple revenue in 2023?",
        "What was Microsoft revenue in fiscal 2023?",
    )
    assert cli_plan.agenda_to_research(query, settings(), ("A?",), True, False) == (
        "A?",
    )  # no TTY: as given
