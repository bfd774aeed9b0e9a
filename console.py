"""The progress display on stderr: percent, phase, researchers, sources. Quiet when not a TTY."""

from __future__ import annotations

import sys
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn

from deepresearch.policies.progress import ProgressState, advance
from deepresearch.schemas import Event


class ProgressDisplay:
    def __init__(self, enabled: bool | None = None) -> None:
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.state = ProgressState()
        self._console = Console(stderr=True)
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> ProgressDisplay:
        if self.enabled:
            self._progress = Progress(
                TextColumn("[bold]{task.fields[phase]:<11}"),
                BarColumn(),
                TextColumn("{task.percentage:>3.0f}%"),
                TextColumn(
                    "round {task.fields[round]} · researchers {task.fields[active]} · sources "
                    "{task.fields[sources]} · tokens {task.fields[tokens]} · ${task.fields[cost]}"
                ),
                console=self._console,
                transient=True,
            )
            self._progress.__enter__()
            self._task = self._progress.add_task(
                "run", total=100, phase="starting", active=0, sources=0
            )
        return self

    def update(self, events: list[Event]) -> None:
        for event in events:
            self.state = advance(self.state, event)
        if self._progress is not None and self._task is not None:
            s = self.state
            self._progress.update(
                self._task,
                completed=s.percent,
                phase=s.phase,
                active=s.researchers_active,
                sources=s.sources,
            )

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
