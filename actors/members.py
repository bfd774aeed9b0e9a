"""The crew's shared actors: researchers, the evaluator and the search gateway serve many runs.

Each is created once per Ray cluster (``actors/crew.py``) and keeps what is worth keeping between runs:
opened corpus indexes and fetchers (by configuration), search breakers and rate limits (shared
on purpose: one provider's 429 informs every run). What belongs to one run arrives with each
call as its ``RunContext`` and is kept only by run id (its model client, its gateway with the
run's keys) until the run host says the run ended (``release``). These stay plain classes;
``runtime.named`` applies ``ray.remote``.

A service warms its crew (``crew.warm``): ``ready`` opens what runs will read, and receives the
crew's handles (``crew``) only to decode them: the first decoding of a run host's handle loads
its class in the receiving process (a second of imports), which no request should pay for.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from deepresearch.actors.run_host import build_model
from deepresearch.config.settings import Settings
from deepresearch.errors import DeepResearchError
from deepresearch.llm_messages import EvaluateTask, LLMReply
from deepresearch.per_run import run_context
from deepresearch.per_run.run_context import (
    RunContext,
    RunGateway,
    RunPool,
    RunSink,
)
from deepresearch.per_run.run_models import KEPT_RUNS, RunModels
from deepresearch.providers.breakers import breaker_config, retry_policy
from deepresearch.providers.search.base import Fetcher, SearchProvider
from deepresearch.schemas import Evaluation, PriorWork, ResearcherReport, SearchResult, SubTask

# What the crew's work needs (the research, evaluation and search machinery, the providers) is
# imported inside the methods doing it, in the crew's processes: a driver decoding a crew
# member's handle imports this module (Ray loads the actor's class), and a warm run should not
# pay for machinery only the crew runs (tests/unit/test_warm_imports.py).
if TYPE_CHECKING:
    from deepresearch.actors.researcher import Researcher
    from deepresearch.actors.search_gateway import SearchGateway

KEPT_FETCHERS = 16  # fetcher sets (one per distinct corpus/web configuration)


def fetcher_key(settings: Settings) -> str:
    """What decides a run's fetchers: runs that agree on it share them (and their indexes)."""
    return "|".join(
        (
            str(settings.corpus.path),
            str(settings.resolved_cache_dir()),
            str(settings.corpus.passage_chars),
            ",".join(settings.search.providers),
            str(settings.search.code_dir),
            settings.web.model_dump_json(),
            settings.simulate.model_dump_json(),
        )
    )


class CrewResearcher:
    """Serves sub-tasks of any run: one ``Researcher`` per call, so calls never share state."""

    def __init__(self) -> None:
        self._models = RunModels(build_model)
        self._fetchers: OrderedDict[str, list[Fetcher]] = OrderedDict()
        self._live: dict[tuple[str, str], Researcher] = {}

    def _fetchers_for(self, settings: Settings) -> list[Fetcher]:
        key = fetcher_key(settings)
        fetchers = self._fetchers.get(key)
        if fetchers is None:
            from deepresearch.providers.assembly import from_settings as assembly

            fetchers = self._fetchers[key] = assembly.build_fetchers(settings)
            while len(self._fetchers) > KEPT_FETCHERS:
                self._fetchers.popitem(last=False)
        self._fetchers.move_to_end(key)
        return fetchers

    async def run(
        self,
        context: RunContext,
        subtask: SubTask,
        notes: Sequence[str] = (),
        prior: PriorWork | None = None,
    ) -> ResearcherReport:
        """One sub-task of ``context``'s run; its events are in the run's log when it returns."""
        from deepresearch.actors.researcher import Researcher

        researcher = Researcher(
            context.settings,
            RunGateway(context),
            RunPool(context.host, context.run_id),
            RunSink(context.host, context.run_id),
            self._models.get(context),
            self._fetchers_for(context.settings),
        )
        key = (context.run_id, subtask.id)
        self._live[key] = researcher
        try:
            return await researcher.run(subtask, notes, prior)
        finally:
            if self._live.get(key) is researcher:
                del self._live[key]

    async def ready(self, settings: Settings, crew: Sequence[Any] = ()) -> None:
        """Open the fetchers (and corpus index) runs with ``settings`` will use; one that cannot
        be opened yet (no index built) is left for the first run to report. ``crew``: the handles
        a run's context carries (``decoded``)."""
        with contextlib.suppress(DeepResearchError):
            await asyncio.to_thread(self._fetchers_for, settings)

    async def steer(self, run_id: str, subtask_id: str, note: str) -> None:
        researcher = self._live.get((run_id, subtask_id))
        if researcher is not None:
            await researcher.steer(note)

    async def release(self, run_id: str) -> None:
        self._models.release(run_id)

    async def held(self) -> list[str]:
        return sorted(self._models.held() | {run for run, _ in self._live})

    async def pid(self) -> int:
        return os.getpid()


class CrewEvaluator:
    """Evaluates rounds of any run with that run's model."""

    def __init__(self) -> None:
        self._models = RunModels(build_model)

    async def ready(self, crew: Sequence[Any] = ()) -> None:
        """Load what evaluating needs; receiving ``crew`` decoded the handles runs' contexts
        carry."""
        from deepresearch.actors import evaluator  # noqa: F401

    async def evaluate(
        self, context: RunContext, task: EvaluateTask
    ) -> tuple[Evaluation, list[LLMReply]]:
        from deepresearch.actors.evaluator import Evaluator

        return await Evaluator(self._models.get(context)).evaluate(task)

    async def release(self, run_id: str) -> None:
        self._models.release(run_id)

    async def held(self) -> list[str]:
        return sorted(self._models.held())


class CrewGateway:
    """Every run's searches: one ``SearchGateway`` per run (its chain, built with its keys, and
    its events going to its log) over breakers and rate limits shared by all runs."""

    def __init__(self) -> None:
        from deepresearch.actors.search_gateway import SharedLimits

        self._shared = SharedLimits()
        self._runs: OrderedDict[str, SearchGateway] = OrderedDict()

    def _gateway(self, context: RunContext) -> SearchGateway:
        gateway = self._runs.get(context.run_id)
        if gateway is None:
            from deepresearch.actors.search_gateway import SearchGateway
            from deepresearch.providers.assembly import from_settings as assembly

            settings, env = context.settings, context.search_env()

            async def build() -> list[SearchProvider]:
                return await assembly.open_search_providers(settings, env)

            gateway = SearchGateway(
                build,
                breaker_config(settings.search.breaker),
                retry_policy(settings.search.retry),
                sink=RunSink(context.host, context.run_id),
                rate_limits=settings.search.rate_limits,
                shared=self._shared,
            )
            self._runs[context.run_id] = gateway
            while len(self._runs) > KEPT_RUNS:
                self._runs.popitem(last=False)
        return gateway

    async def ready(self, settings: Settings, crew: Sequence[Any] = ()) -> None:
        """Open the corpus index runs with ``settings`` will search, with its line-item labels
        and signed pages (see ``CrewResearcher``): the first search would build them."""
        from deepresearch.providers.search import local
        from deepresearch.providers.search.corpus_index import CorpusIndex

        if settings.corpus.path is not None:
            with contextlib.suppress(DeepResearchError):
                index = await asyncio.to_thread(local.opened_index, settings)
                if isinstance(index, CorpusIndex):
                    await asyncio.to_thread(index.labels)
                    await asyncio.to_thread(index.signed_pages)

    async def search(self, context: RunContext, query: str, limit: int) -> SearchResult:
        return await self._gateway(context).search(query, limit)

    async def release(self, run_id: str) -> None:
        self._runs.pop(run_id, None)
        run_context.forget(run_id)

    async def held(self) -> list[str]:
        return sorted(self._runs)

    async def pid(self) -> int:
        return os.getpid()


def crew_member(kind: str) -> type[Any]:
    """The class a crew actor of ``kind`` runs (``run_host`` lives in ``actors/run_host.py``)."""
    from deepresearch.actors.ledger import CrewLedger
    from deepresearch.actors.run_host import RunHost

    members: dict[str, type[Any]] = {
        "researcher": CrewResearcher,
        "evaluator": CrewEvaluator,
        "search_gateway": CrewGateway,
        "ledger": CrewLedger,
        "run_host": RunHost,
    }
    return members[kind]
