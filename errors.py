"""One exception tree for the whole package.

Every error must survive a pickle round trip with its fields intact: Ray ships exceptions between
processes, and an error that cannot be rebuilt turns into an opaque ``RaySystemError`` that hides the
real cause. Constructors therefore take positional or defaulted arguments only, and the base class
records them so ``__reduce__`` can rebuild the exact instance.
"""

from __future__ import annotations

import functools
from typing import Any, ClassVar


class DeepResearchError(Exception):
    """Base of every error the package raises on purpose."""

    exit_code: ClassVar[int] = 1
    _ctor_args: tuple[Any, ...]
    _ctor_kwargs: dict[str, Any]

    def __new__(cls, *args: Any, **kwargs: Any) -> DeepResearchError:
        self = super().__new__(cls, *args)
        self._ctor_args = args
        self._ctor_kwargs = kwargs
        return self

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        self.message = message

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        factory: Any = functools.partial(type(self), **self._ctor_kwargs)
        return (factory, tuple(self._ctor_args))

    def __str__(self) -> str:
        return self.message


class ConfigError(DeepResearchError):
    """A setting is unknown or invalid; ``key`` names it (dotted path)."""

    exit_code = 2

    def __init__(self, key: str = "", reason: str = "") -> None:
        super().__init__(f"config {key}: {reason}" if key else reason)
        self.key = key
        self.reason = reason


class InputError(DeepResearchError):
    """The user's input (query, paths, options) cannot be used."""

    exit_code = 2


class CorpusError(InputError):
    """The corpus folder is missing, empty, unreadable or holds no readable document."""

    def __init__(self, path: str = "", reason: str = "") -> None:
        super().__init__(f"corpus {path}: {reason}")
        self.path = path
        self.reason = reason


class CorpusRefused(CorpusError):
    """A client named a corpus outside the roots the operator allowed (``service.corpus_roots``)."""


class StorageError(DeepResearchError):
    """A file or directory we must write cannot be written."""

    exit_code = 2

    def __init__(self, path: str = "", reason: str = "") -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class CheckpointCorrupt(StorageError):
    """A checkpoint failed its hash check or could not be parsed."""


class ProviderError(DeepResearchError):
    """A provider (search, LLM, fetch) failed; ``retryable`` says whether trying again may help."""

    def __init__(
        self,
        provider: str = "",
        reason: str = "",
        retryable: bool = False,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(f"{provider}: {reason}")
        self.provider = provider
        self.reason = reason
        self.retryable = retryable
        self.retry_after_s = retry_after_s


class RateLimited(ProviderError):
    """HTTP 429 or an equivalent; ``retry_after_s`` comes from ``Retry-After`` when present."""

    def __init__(self, provider: str = "", retry_after_s: float | None = None) -> None:
        super().__init__(provider, "rate limited", True, retry_after_s)


class CircuitOpen(DeepResearchError):
    """The provider's breaker is open; calls are refused until ``retry_in_s`` has passed."""

    def __init__(self, provider: str = "", retry_in_s: float = 0.0) -> None:
        super().__init__(f"{provider}: circuit open, retry in {retry_in_s:.1f}s")
        self.provider = provider
        self.retry_in_s = retry_in_s


class SearchUnavailable(DeepResearchError):
    """Every search provider in the chain failed or is open; the run continues degraded."""

    def __init__(self, providers: tuple[str, ...] = (), reason: str = "") -> None:
        super().__init__(f"no search provider available ({', '.join(providers)}): {reason}")
        self.providers = tuple(providers)
        self.reason = reason


class LLMUnavailable(ProviderError):
    """Every tier of a role's LLM fallback chain failed or is open."""

    def __init__(self, role: str = "", tiers: tuple[str, ...] = (), detail: str = "") -> None:
        super().__init__("llm", f"no tier answered the {role} call ({', '.join(tiers)}): {detail}")
        self.role = role
        self.tiers = tuple(tiers)
        self.detail = detail


class FetchBlocked(DeepResearchError):
    """A URL or document id was refused by the fetch rules (address, scheme, path escape)."""

    def __init__(self, url: str = "", reason: str = "") -> None:
        super().__init__(f"blocked {url}: {reason}")
        self.url = url
        self.reason = reason


class FetchError(DeepResearchError):
    """A URL or document could not be fetched or read."""

    def __init__(self, url: str = "", reason: str = "") -> None:
        super().__init__(f"fetch {url}: {reason}")
        self.url = url
        self.reason = reason


class ExtractionError(DeepResearchError):
    """Text could not be extracted from a document (corrupt, timed out, over the memory limit)."""

    def __init__(self, path: str = "", reason: str = "") -> None:
        super().__init__(f"extract {path}: {reason}")
        self.path = path
        self.reason = reason


class StructuredOutputError(DeepResearchError):
    """A model reply did not validate against the expected schema, even after repair and retry."""

    def __init__(self, role: str = "", reason: str = "", excerpt: str = "") -> None:
        super().__init__(f"{role}: invalid structured reply: {reason}")
        self.role = role
        self.reason = reason
        self.excerpt = excerpt


class BudgetExceeded(DeepResearchError):
    """A run-wide budget (time, cost, rounds, steps) was reached."""

    def __init__(self, budget: str = "", limit: float = 0.0) -> None:
        super().__init__(f"{budget} budget of {limit:g} reached")
        self.budget = budget
        self.limit = limit


class QueryGated(DeepResearchError):
    """The intent gate answered instead of starting a run (``outcome``: chitchat, harmful or
    ambiguous; ``reply``: what the user is told). Each entry point answers in its own terms; the
    CLI exits 0, 3 or 2 by outcome."""

    exit_code = 3

    def __init__(self, outcome: str = "", reply: str = "", reason: str = "") -> None:
        super().__init__(reply or f"the query was not researched ({outcome})")
        self.outcome = outcome
        self.reply = reply
        self.reason = reason


class RunInterrupted(DeepResearchError):
    """The user interrupted the run; the checkpoint is saved and it can be resumed."""

    exit_code = 130

    def __init__(self, run_id: str = "") -> None:
        super().__init__(f"run {run_id} interrupted")
        self.run_id = run_id


class ClusterError(DeepResearchError):
    """A Ray cluster or Jobs server cannot be reached or refused us (address, auth, upload size)."""

    exit_code = 2

    def __init__(self, address: str = "", reason: str = "") -> None:
        super().__init__(f"ray {address}: {reason}" if address else f"ray: {reason}")
        self.address = address
        self.reason = reason
