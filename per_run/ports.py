"""What an actor needs from its peers, as Protocols, and a proxy that makes a Ray handle fit them.

Actors talk to peers through these ports, so the same actor code runs against Ray handles (wrapped
in ``RemoteProxy``) or plain in-process objects (unit tests, the in-process benchmark driver).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from deepresearch.llm_messages import EvaluateTask, LLMReply
from deepresearch.schemas import (
    Claim,
    Evaluation,
    FetchedDoc,
    PriorWork,
    ResearcherReport,
    SearchRecord,
    SearchResult,
    SubTask,
)


class ResearcherPort(Protocol):
    async def run(
        self, subtask: SubTask, notes: Sequence[str] = (), prior: PriorWork | None = None
    ) -> ResearcherReport: ...
    async def steer(self, note: str) -> None: ...


class Spawner(Protocol):
    """Hands out researchers (on Ray: the crew's, shared by every run; ``actors/run_host.py``)."""

    def acquire(self) -> ResearcherPort: ...
    def release(self, researcher: ResearcherPort, healthy: bool) -> None: ...
    def close(self) -> None: ...
    def crashed(self, exc: BaseException) -> bool:
        """Whether ``exc`` means the researcher's process died (a retry on a fresh one may work)."""
        ...


class EvaluatorPort(Protocol):
    async def evaluate(self, task: EvaluateTask) -> tuple[Evaluation, list[LLMReply]]: ...


class PoolPort(Protocol):
    async def claim(self, url: str, owner: str) -> Claim: ...
    async def claim_many(
        self, urls: list[str], owner: str, stored: Sequence[FetchedDoc] = ()
    ) -> list[Claim]: ...
    async def handshake(
        self, candidates: list[str], owner: str, batch: list[str]
    ) -> tuple[tuple[str, ...], list[Claim]]: ...
    async def store_many(self, docs: Sequence[FetchedDoc]) -> None: ...
    async def keep_searches(self, records: Sequence[SearchRecord]) -> None: ...
    async def fail(self, url: str, reason: str) -> None: ...
    async def get(self, url: str, timeout_s: float = 30.0) -> FetchedDoc | None: ...


class GatewayPort(Protocol):
    async def search(self, query: str, limit: int) -> SearchResult: ...


class RemoteProxy:
    """``await proxy.method(*args)`` calls ``handle.method.remote(*args)`` and awaits the result."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.handle, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            return await method.remote(*args, **kwargs)

        return call

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (RemoteProxy, (self.handle,))
