"""Each run's model client in a crew process: a plain object (not an actor) that the run host and
the crew's members each hold, so they build a run's router once and share its breakers. How a
model is built is handed in (``ModelBuilder``): the actors own the provider assembly."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from pydantic import JsonValue

from deepresearch.per_run import run_context
from deepresearch.per_run.run_context import LedgerHook, LedgerTerms, RunContext, RunSink
from deepresearch.policies.resilience.breaker import BreakerState
from deepresearch.providers.llm.base import LLMProvider

if TYPE_CHECKING:
    from deepresearch.config.settings import Settings
    from deepresearch.providers.llm.registry import LLMKeys

Notify = Callable[[str, dict[str, JsonValue]], Awaitable[None]]
# (settings, keys, ledger hook, shared breakers, event notify) -> the run's model
ModelBuilder = Callable[
    ["Settings", "LLMKeys", "LedgerHook | None", dict[str, BreakerState], "Notify | None"],
    LLMProvider,
]

KEPT_RUNS = 512  # per-run entries a crew actor keeps at most (a run whose end was never said)


class RunModels:
    """Each run's model client, built in this process from its settings and keys on first use.
    Their tiers' breakers are shared (``breakers``): one run's failing provider informs every run
    this process serves, as the search gateway's do for search."""

    def __init__(self, build: ModelBuilder) -> None:
        self._build = build
        self._models: OrderedDict[str, LLMProvider] = OrderedDict()
        self.breakers: dict[str, BreakerState] = {}

    def get(self, context: RunContext) -> LLMProvider:
        """The run's model; a scripted one (tests) is kept from its first call, so its script
        goes on from where the run's previous call left it, as in one actor process."""
        model = self._models.get(context.run_id)
        if model is None:
            if context.llm is not None:
                model = context.llm
            else:
                hook = None
                if context.ledger is not None:
                    terms = LedgerTerms.of(context.settings)
                    hook = LedgerHook(context.ledger, context.run_id, terms)
                sink = RunSink(context.host, context.run_id) if context.host is not None else None
                notify = sink.emit if sink is not None else None
                model = self._build(context.settings, context.keys, hook, self.breakers, notify)
            self._models[context.run_id] = model
            while len(self._models) > KEPT_RUNS:
                self._models.popitem(last=False)
        return model

    def release(self, run_id: str) -> None:
        self._models.pop(run_id, None)
        run_context.forget(run_id)

    def held(self) -> set[str]:
        return set(self._models)
