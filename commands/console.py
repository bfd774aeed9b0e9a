"""The progress display on stderr: a live line on a terminal, a few plain lines otherwise.

On a terminal one transient line shows the phase, percent (``exploring`` when past the planned
rounds), round, researchers, sources, tokens and cost, and is erased when the run ends so the
report path stands alone. Off a terminal (CI, pipes, ``--json`` captured by a script) a short
line goes to stderr when the run's stage changes, never per event, so a slow Ray start-up is not
silent and stdout keeps only the result. Every figure is rendered from ``ProgressState`` by the
functions below, so the display cannot ask for a field nobody set.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import TextIO

from rich.console import Console
from rich.progress import Progress, ProgressColumn, Task, TaskID
from rich.table import Column
from rich.text import Text

from deepresearch.policies.lifecycle.progress import ProgressState, advance
from deepresearch.schemas import Event


def cost_text(usd: float) -> str:
    return f"${usd:.4f}" if 0 < usd < 0.01 else f"${usd:.2f}"


def details(state: ProgressState) -> str:
    """Everything after the bar: ``42% · round 1 · researchers 2 · sources 7 · tokens 1,234 · $0.01``."""
    percent = f"{state.percent:>3}%" if state.percent_known else "exploring"
    line = (
        f"{percent} · round {state.round} · researchers {state.researchers_active} · "
        f"sources {state.sources} · tokens {state.tokens:,} · {cost_text(state.cost_usd)}"
    )
    return f"{line} · {state.waiting}" if state.waiting else line


def live_line(state: ProgressState, width: int) -> Text:
    """Phase, a bar that takes what room the terminal leaves (none while exploring), details."""
    phase = "researching" if state.phase == "exploring" else state.phase  # "exploring" is in tail
    head, tail = f"{phase:<11} ", details(state)
    room = min(20, width - len(head) - len(tail) - 2)
    if room < 6 or not state.percent_known:
        return Text.assemble((head, "bold"), tail)
    filled = room * state.percent // 100
    return Text.assemble(
        (head, "bold"), ("━" * filled, "magenta"), ("━" * (room - filled), "grey37"), " ", tail
    )


def plain_line(state: ProgressState) -> str:
    """The line printed off a terminal when the stage changes."""
    if state.stage == "starting":
        return "deep-research: starting Ray and the actors"
    return f"deep-research: {state.stage}: {details(state).strip()}"


class _Line(ProgressColumn):
    """Renders the current state each refresh (no task fields to forget to set); one line, cut
    rather than wrapped on a narrow terminal, so erasing it at the end leaves nothing behind."""

    def __init__(self, display: ProgressDisplay) -> None:
        super().__init__(table_column=Column(no_wrap=True, overflow="ellipsis"))
        self._display = display

    def render(self, task: Task) -> Text:
        return live_line(self._display.state, self._display.width)


class ProgressDisplay:
    def __init__(self, enabled: bool | None = None, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.state = ProgressState()
        self._console = Console(file=self.stream)
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._printed_stage = ""

    def __enter__(self) -> ProgressDisplay:
        if self.enabled:
            self._progress = Progress(_Line(self), console=self._console, transient=True)
            self._progress.__enter__()
            self._task = self._progress.add_task("run", total=100)
        else:
            self._plain()
        return self

    def update(self, events: list[Event]) -> None:
        for event in events:
            self.state = advance(self.state, event)
            if not self.enabled:
                self._plain()  # every stage the run went through, however the events were batched
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, completed=self.state.percent)
            self._progress.refresh()  # every batch is drawn (batches come at most 4 times a second)

    @property
    def width(self) -> int:
        return self._console.width

    def _plain(self) -> None:
        if self.state.stage != self._printed_stage:
            self._printed_stage = self.state.stage
            print(plain_line(self.state), file=self.stream, flush=True)

    def message(self, text: str) -> None:
        if self.enabled:
            self._console.print(text)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.__exit__(exc_type, exc, tb)
