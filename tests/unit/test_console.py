"""The progress display without a real terminal: the live line's text, and the plain lines.

The live path is driven with a stream that says it is a TTY, so rich renders exactly as on a
terminal (the pty tier in tests/e2e/test_terminal.py does the same through the real CLI).
"""

from __future__ import annotations

import io
import re

from deepresearch.commands.console import ProgressDisplay, details, plain_line
from deepresearch.policies.lifecycle.progress import ProgressState, advance
from deepresearch.schemas import Event

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def ev(seq: int, type: str, **payload: object) -> Event:
    return Event(seq=seq, ts=0.0, run_id="r", type=type, payload=payload)  # type: ignore[arg-type]


RUN = [
    ev(1, "run_started", mode="deep"),
    ev(2, "plan_ready", count=2, target_rounds=1, slots=1),
    ev(3, "researcher_started", subtask="s1"),
    ev(4, "researcher_progress", subtask="s1", phase="gathering", units=1, of=2),
    ev(5, "source_read", url="u1"),
    ev(6, "researcher_progress", subtask="s1", phase="scraping", units=2, of=2),
    ev(7, "source_read", url="u2"),
    ev(8, "researcher_finished", subtask="s1", tokens=1500, cost_usd=0.004),
    ev(9, "round_started", round=2, count=1),
    ev(10, "researcher_progress", phase="gathering"),
    ev(11, "writing", reports=2),
    ev(12, "run_finished", status="completed"),
]


def test_details_show_every_field_and_exploring_without_a_percent() -> None:
    state = ProgressState()
    for event in RUN[:8]:
        state = advance(state, event)
    assert details(state) == (" 40% · round 1 · researchers 0 · sources 2 · tokens 1,500 · $0.0040")
    exploring = advance(state, RUN[8])
    assert details(exploring).startswith("exploring · round 2 · ")
    done = advance(advance(exploring, RUN[10]), RUN[11])
    assert details(done).startswith("100% · ") and done.stage == "done"


def test_live_line_renders_each_update_and_is_erased_at_the_end() -> None:
    tty = FakeTTY()
    with ProgressDisplay(stream=tty) as display:
        assert display.enabled
        for event in RUN:
            display.update([event])
    raw = tty.getvalue()
    text = ANSI.sub("", raw)
    assert "gathering" in text and "researching exploring · round 2" in text
    assert re.search(r"\d+% · round 1 · researchers 1 · sources 1 · tokens 0 · \$0\.00", text)
    assert "tokens 1,500 · $0.0040" in text
    # transient: the last thing written erases the line (cursor back, clear line), nothing after
    assert raw.endswith("\x1b[2K")


def test_off_a_terminal_one_plain_line_per_stage_not_per_event() -> None:
    out = io.StringIO()
    with ProgressDisplay(stream=out) as display:
        assert not display.enabled
        display.update(RUN[:3])
        display.update(RUN[3:8])
        display.update(RUN[8:])  # exploring, writing and done arrive in one batch
    lines = out.getvalue().splitlines()
    assert [line.split(":")[1].strip() for line in lines] == [
        "starting Ray and the actors",
        "planning",
        "researching",
        "exploring",
        "writing",
        "done",
    ]
    assert lines[-1].startswith("deep-research: done: 100% · round 2 · ")
    assert "\x1b" not in out.getvalue()
    assert plain_line(ProgressState()) == lines[0]
